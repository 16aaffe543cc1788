/*
 * A stand-in for Rockchip's librkllmrt.so (RKLLM C API, rkllm.h 1.3.0) for tests on any machine.
 *
 * Same exported functions, same struct layouts (rkllm_stub.h). No model is run: what a run does is
 * chosen per handle at rkllm_init time from the environment:
 *
 *   RKLLM_STUB_MODE      stream (default)   tokens through the callback, then FINISH with perf figures
 *                        fail_init          rkllm_init returns -1
 *                        error              one token, then an RKLLM_RUN_ERROR event; rkllm_run returns 0
 *                        fail_first_token   init succeeds; every run reports ERROR before any token, returns -1
 *                        reject             rkllm_run returns -1 with no event (as for a prompt over the window)
 *                        hang               no event until rkllm_abort, then FINISH (safety exit after 120 s)
 *                        stuck              after RKLLM_STUB_OK_RUNS normal runs (default 0): no event and
 *                                           deaf to rkllm_abort, as a wedged NPU (returns after 120 s)
 *   RKLLM_STUB_TOKENS    token texts separated by '|' (default "Hello| world|.")
 *   RKLLM_STUB_DELAY_MS  pause before each token, ms (default 0)
 *   RKLLM_STUB_NPU_NODE  a device node rkllm_init opens read-write first, as the real runtime opens
 *                        the rknpu node; when it cannot, init prints why and returns -1 (case C07)
 *
 * The runtime version is a string literal in the binary, as in the real library, chosen when
 * compiling: -DRKLLM_STUB_VERSION='"1.3.0"'. rkllm_init prints the real runtime's log line.
 *
 * Test-only exports: rkllm_stub_layout(name) (sizeof "Struct" / offsetof "Struct.member"),
 * rkllm_stub_describe(handle) (what init and the last run received), rkllm_stub_max_concurrent().
 *
 *   RKLLM_STUB_SHARED    a file of at least 8 bytes: two ints (runs in progress, the most seen at
 *                        once) counted by every process that runs the stand-in with it, as one NPU
 *                        is shared by every process of a board
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rkllm_stub.h"

#ifndef RKLLM_STUB_VERSION
#define RKLLM_STUB_VERSION "1.3.0"
#endif

#define EXPORT __attribute__((visibility("default")))

static const char k_runtime_version[] = RKLLM_STUB_VERSION;
static const char k_driver_version[] = "0.9.8";

enum { MODE_STREAM, MODE_FAIL_INIT, MODE_ERROR, MODE_FAIL_FIRST_TOKEN, MODE_REJECT, MODE_HANG, MODE_STUCK };

typedef struct {
    RKLLMCallback cb;
    int mode;
    int delay_ms;
    int ok_runs; /* stuck mode: runs that stream normally before every later one is stuck */
    int runs;    /* runs started */
    char* tokens; /* '|'-separated, owned */
    int aborted;  /* atomic */
    int running;  /* atomic */
    char init_desc[1024];
    char chat_template[512];
    char last_run[8192];
} StubHandle;

static int g_concurrent = 0;     /* atomic: rkllm_run calls in progress, all handles */
static int g_max_concurrent = 0; /* atomic: the most seen at once */

/* The RKLLM_STUB_SHARED counters, mapped on the first run (NULL: none). */
static int* shared_counters(void) {
    static int* mapped = NULL;
    const char* path = getenv("RKLLM_STUB_SHARED");
    if (mapped || !path || !*path) return mapped;
    int fd = open(path, O_RDWR);
    if (fd < 0) return NULL;
    void* m = mmap(NULL, 2 * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m != MAP_FAILED) mapped = m;
    return mapped;
}

static void count_up(int* concurrent, int* max_seen) {
    int now = __atomic_add_fetch(concurrent, 1, __ATOMIC_SEQ_CST);
    int seen = __atomic_load_n(max_seen, __ATOMIC_SEQ_CST);
    while (now > seen && !__atomic_compare_exchange_n(max_seen, &seen, now, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
}

static int parse_mode(const char* s) {
    if (!s || !*s || !strcmp(s, "stream")) return MODE_STREAM;
    if (!strcmp(s, "fail_init")) return MODE_FAIL_INIT;
    if (!strcmp(s, "error")) return MODE_ERROR;
    if (!strcmp(s, "fail_first_token")) return MODE_FAIL_FIRST_TOKEN;
    if (!strcmp(s, "reject")) return MODE_REJECT;
    if (!strcmp(s, "hang")) return MODE_HANG;
    if (!strcmp(s, "stuck")) return MODE_STUCK;
    return -1;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

static int is_aborted(StubHandle* h) { return __atomic_load_n(&h->aborted, __ATOMIC_SEQ_CST); }

static int emit(StubHandle* h, void* userdata, LLMCallState state, const char* text, int32_t token_id,
                const RKLLMPerfStat* perf) {
    RKLLMResult r;
    memset(&r, 0, sizeof r);
    r.text = text;
    r.token_id = token_id;
    if (perf) r.perf = *perf;
    return h->cb.result_callback(&r, userdata, state);
}

EXPORT RKLLMParam rkllm_createDefaultParam(void) {
    /* The stand-in's own defaults; the real runtime's values are not documented in the header. */
    RKLLMParam p;
    memset(&p, 0, sizeof p);
    p.model_path = NULL;
    p.max_context_len = 512;
    p.max_new_tokens = -1;
    p.top_k = 1;
    p.n_keep = -1;
    p.top_p = 0.9f;
    p.temperature = 0.8f;
    p.repeat_penalty = 1.1f;
    p.mirostat_tau = 5.0f;
    p.mirostat_eta = 0.1f;
    p.skip_special_token = true;
    p.extend_param.enabled_cpus_num = 4;
    p.extend_param.enabled_cpus_mask = 0xF0;
    p.extend_param.n_batch = 1;
    return p;
}

EXPORT int rkllm_init(LLMHandle* handle, RKLLMParam* param, RKLLMCallback* callback) {
    if (!handle || !param || !callback || !callback->result_callback) {
        fprintf(stderr, "E rkllm: invalid arguments to rkllm_init\n");
        return -1;
    }
    *handle = NULL;
    int mode = parse_mode(getenv("RKLLM_STUB_MODE"));
    if (mode < 0) {
        fprintf(stderr, "E rkllm(stub): unknown RKLLM_STUB_MODE=%s\n", getenv("RKLLM_STUB_MODE"));
        return -1;
    }
    printf("I rkllm: rkllm-runtime version: %s, rknpu driver version: %s, platform: %s\n", k_runtime_version,
           k_driver_version, "STUB");
    fflush(stdout);
    const char* node = getenv("RKLLM_STUB_NPU_NODE");
    if (node && *node) {
        int fd = open(node, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "E rkllm: failed to open the rknpu device %s: %s\n", node, strerror(errno));
            return -1;
        }
        close(fd);
    }
    if (mode == MODE_FAIL_INIT) {
        fprintf(stderr, "E rkllm(stub): init failure requested by RKLLM_STUB_MODE=fail_init\n");
        return -1;
    }
    FILE* f = param->model_path ? fopen(param->model_path, "rb") : NULL;
    if (!f) {
        fprintf(stderr, "E rkllm: failed to load model '%s'\n", param->model_path ? param->model_path : "(null)");
        return -1;
    }
    fclose(f);
    StubHandle* h = calloc(1, sizeof *h);
    if (!h) return -1;
    h->cb = *callback;
    h->mode = mode;
    const char* d = getenv("RKLLM_STUB_DELAY_MS");
    h->delay_ms = d ? atoi(d) : 0;
    const char* ok = getenv("RKLLM_STUB_OK_RUNS");
    h->ok_runs = ok ? atoi(ok) : 0;
    const char* t = getenv("RKLLM_STUB_TOKENS");
    h->tokens = strdup(t ? t : "Hello| world|.");
    snprintf(h->init_desc, sizeof h->init_desc,
             "init.model_path=%s\ninit.max_context_len=%d\ninit.max_new_tokens=%d\ninit.top_k=%d\n"
             "init.top_p=%.3f\ninit.temperature=%.3f\ninit.skip_special_token=%d\ninit.ignore_eos_token=%d\n"
             "init.is_async=%d\ninit.base_domain_id=%d\ninit.enabled_cpus_num=%d\ninit.enabled_cpus_mask=%u\n"
             "init.n_batch=%u\n",
             param->model_path, param->max_context_len, param->max_new_tokens, param->top_k, param->top_p,
             param->temperature, param->skip_special_token, param->ignore_eos_token, param->is_async,
             param->extend_param.base_domain_id, param->extend_param.enabled_cpus_num,
             param->extend_param.enabled_cpus_mask, param->extend_param.n_batch);
    *handle = h;
    return 0;
}

EXPORT int rkllm_load_lora(LLMHandle handle, RKLLMLoraAdapter* lora_adapter) {
    return handle && lora_adapter ? 0 : -1;
}

EXPORT int rkllm_load_prompt_cache(LLMHandle handle, const char* prompt_cache_path) {
    return handle && prompt_cache_path ? 0 : -1;
}

EXPORT int rkllm_release_prompt_cache(LLMHandle handle) { return handle ? 0 : -1; }

EXPORT int rkllm_destroy(LLMHandle handle) {
    StubHandle* h = handle;
    if (!h) return -1;
    free(h->tokens);
    free(h);
    return 0;
}

static void describe_run(StubHandle* h, const RKLLMInput* in, const RKLLMInferParam* p) {
    const RKLLMSamplingParam* sp = p->sampling_params;
    snprintf(h->last_run, sizeof h->last_run,
             "run.role=%s\nrun.enable_thinking=%d\nrun.input_type=%d\nrun.mode=%d\nrun.keep_history=%d\n"
             "run.max_new_tokens=%d\nrun.sampling=%d\nrun.top_k=%d\nrun.top_p=%.3f\nrun.temperature=%.3f\n"
             "run.chat_template=%s\nrun.prompt=%s",
             in->role ? in->role : "(null)", in->enable_thinking, (int)in->input_type, (int)p->mode,
             p->keep_history, p->max_new_tokens, sp != NULL, sp ? sp->top_k : -1, sp ? sp->top_p : -1.0f,
             sp ? sp->temperature : -1.0f, h->chat_template,
             in->input_type == RKLLM_INPUT_PROMPT && in->prompt_input ? in->prompt_input : "(none)");
}

static int run_tokens(StubHandle* h, int max_new, void* userdata, int prompt_len) {
    char* copy = strdup(h->tokens);
    int emitted = 0;
    char* save = NULL;
    for (char* tok = strtok_r(copy, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
        if (max_new > 0 && emitted >= max_new) break;
        if (h->delay_ms > 0) sleep_ms(h->delay_ms);
        if (is_aborted(h)) break;
        if (emit(h, userdata, RKLLM_RUN_NORMAL, tok, 1000 + emitted, NULL) == 1) { /* 1 = pause */
            free(copy);
            return 0;
        }
        if (emitted == 0) emit(h, userdata, RKLLM_RUN_WAITING, NULL, -1, NULL); /* half a UTF-8 char: no text */
        emitted++;
    }
    free(copy);
    RKLLMPerfStat perf;
    memset(&perf, 0, sizeof perf);
    perf.prefill_tokens = prompt_len / 4 + 1;
    perf.prefill_time_ms = 2.5f * (float)perf.prefill_tokens;
    perf.generate_tokens = emitted;
    perf.generate_time_ms = 40.0f * (float)emitted; /* 25 tokens/s */
    perf.memory_usage_mb = 1234.5f;
    emit(h, userdata, RKLLM_RUN_FINISH, NULL, -1, &perf);
    return 0;
}

EXPORT int rkllm_run(LLMHandle handle, RKLLMInput* rkllm_input, RKLLMInferParam* rkllm_infer_params,
                     void* userdata) {
    StubHandle* h = handle;
    if (!h || !rkllm_input || !rkllm_infer_params) return -1;
    count_up(&g_concurrent, &g_max_concurrent);
    int* shared = shared_counters();
    if (shared) count_up(&shared[0], &shared[1]);
    __atomic_store_n(&h->aborted, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&h->running, 1, __ATOMIC_SEQ_CST);
    describe_run(h, rkllm_input, rkllm_infer_params);
    int prompt_len = rkllm_input->input_type == RKLLM_INPUT_PROMPT && rkllm_input->prompt_input
                         ? (int)strlen(rkllm_input->prompt_input)
                         : 0;
    int rc = 0;
    switch (h->mode) {
        case MODE_STREAM:
            rc = run_tokens(h, rkllm_infer_params->max_new_tokens, userdata, prompt_len);
            break;
        case MODE_ERROR: {
            char* copy = strdup(h->tokens);
            char* save = NULL;
            char* tok = strtok_r(copy, "|", &save);
            emit(h, userdata, RKLLM_RUN_NORMAL, tok ? tok : "", 1000, NULL);
            emit(h, userdata, RKLLM_RUN_ERROR, NULL, -1, NULL);
            free(copy);
            break;
        }
        case MODE_FAIL_FIRST_TOKEN:
            fprintf(stderr, "E rkllm(stub): first token failed (RKLLM_STUB_MODE=fail_first_token)\n");
            emit(h, userdata, RKLLM_RUN_ERROR, NULL, -1, NULL);
            rc = -1;
            break;
        case MODE_REJECT:
            rc = -1;
            break;
        case MODE_STUCK:
            if (h->runs++ < h->ok_runs) {
                rc = run_tokens(h, rkllm_infer_params->max_new_tokens, userdata, prompt_len);
                break;
            }
            for (int waited = 0; waited < 120000; waited++) sleep_ms(1); /* deaf to rkllm_abort */
            rc = -1;
            break;
        case MODE_HANG: {
            int waited = 0;
            while (!is_aborted(h) && waited < 120000) {
                sleep_ms(1);
                waited++;
            }
            if (is_aborted(h)) {
                RKLLMPerfStat perf;
                memset(&perf, 0, sizeof perf);
                emit(h, userdata, RKLLM_RUN_FINISH, NULL, -1, &perf);
            } else {
                rc = -1;
            }
            break;
        }
    }
    __atomic_store_n(&h->running, 0, __ATOMIC_SEQ_CST);
    if (shared) __atomic_sub_fetch(&shared[0], 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&g_concurrent, 1, __ATOMIC_SEQ_CST);
    return rc;
}

EXPORT int rkllm_run_async(LLMHandle handle, RKLLMInput* rkllm_input, RKLLMInferParam* rkllm_infer_params,
                           void* userdata) {
    /* The stand-in runs it synchronously; events arrive before this returns. */
    return rkllm_run(handle, rkllm_input, rkllm_infer_params, userdata);
}

EXPORT int rkllm_abort(LLMHandle handle) {
    StubHandle* h = handle;
    if (!h) return -1;
    __atomic_store_n(&h->aborted, 1, __ATOMIC_SEQ_CST);
    return 0;
}

EXPORT int rkllm_is_running(LLMHandle handle) {
    StubHandle* h = handle;
    if (!h) return -1;
    return __atomic_load_n(&h->running, __ATOMIC_SEQ_CST) ? 0 : 1; /* 0 while a task runs (header) */
}

EXPORT int rkllm_clear_kv_cache(LLMHandle handle, int keep_system_prompt, int* start_pos, int* end_pos) {
    if (!handle) return -1;
    if ((start_pos == NULL) != (end_pos == NULL)) return -1;
    (void)keep_system_prompt;
    return 0;
}

EXPORT int rkllm_get_kv_cache_size(LLMHandle handle, int* cache_sizes) {
    if (!handle || !cache_sizes) return -1;
    cache_sizes[0] = 0;
    return 0;
}

EXPORT int rkllm_set_chat_template(LLMHandle handle, const char* system_prompt, const char* prompt_prefix,
                                   const char* prompt_postfix) {
    StubHandle* h = handle;
    if (!h || !system_prompt || !prompt_prefix || !prompt_postfix) return -1;
    snprintf(h->chat_template, sizeof h->chat_template, "[%s][%s][%s]", system_prompt, prompt_prefix,
             prompt_postfix);
    return 0;
}

EXPORT int rkllm_set_function_tools(LLMHandle handle, const char* system_prompt, const char* tools,
                                    const char* tool_response_str) {
    return handle && system_prompt && tools && tool_response_str ? 0 : -1;
}

EXPORT int rkllm_set_cross_attn_params(LLMHandle handle, RKLLMCrossAttnParam* cross_attn_params) {
    return handle && cross_attn_params ? 0 : -1;
}

/* ------------------------------------------------------------------ test-only exports */

#define SZ(T) {#T, sizeof(T)}
#define OFF(T, m) {#T "." #m, offsetof(T, m)}

static const struct {
    const char* name;
    size_t value;
} k_layout[] = {
    SZ(RKLLMExtendParam), OFF(RKLLMExtendParam, base_domain_id), OFF(RKLLMExtendParam, embed_flash),
    OFF(RKLLMExtendParam, enabled_cpus_num), OFF(RKLLMExtendParam, enabled_cpus_mask),
    OFF(RKLLMExtendParam, n_batch), OFF(RKLLMExtendParam, use_cross_attn), OFF(RKLLMExtendParam, reserved),

    SZ(RKLLMParam), OFF(RKLLMParam, model_path), OFF(RKLLMParam, max_context_len), OFF(RKLLMParam, max_new_tokens),
    OFF(RKLLMParam, top_k), OFF(RKLLMParam, n_keep), OFF(RKLLMParam, top_p), OFF(RKLLMParam, temperature),
    OFF(RKLLMParam, repeat_penalty), OFF(RKLLMParam, frequency_penalty), OFF(RKLLMParam, presence_penalty),
    OFF(RKLLMParam, mirostat), OFF(RKLLMParam, mirostat_tau), OFF(RKLLMParam, mirostat_eta),
    OFF(RKLLMParam, skip_special_token), OFF(RKLLMParam, ignore_eos_token), OFF(RKLLMParam, is_async),
    OFF(RKLLMParam, extend_param),

    SZ(RKLLMLoraAdapter), OFF(RKLLMLoraAdapter, lora_adapter_path), OFF(RKLLMLoraAdapter, lora_adapter_name),
    OFF(RKLLMLoraAdapter, scale),

    SZ(RKLLMEmbedInput), OFF(RKLLMEmbedInput, embed), OFF(RKLLMEmbedInput, n_tokens),
    SZ(RKLLMTokenInput), OFF(RKLLMTokenInput, input_ids), OFF(RKLLMTokenInput, n_tokens),

    SZ(RKLLMMultiModalInput), OFF(RKLLMMultiModalInput, prompt), OFF(RKLLMMultiModalInput, image),
    OFF(RKLLMMultiModalInput, image.image_embed), OFF(RKLLMMultiModalInput, image.n_image_tokens),
    OFF(RKLLMMultiModalInput, image.n_image), OFF(RKLLMMultiModalInput, image.image_start),
    OFF(RKLLMMultiModalInput, image.image_end), OFF(RKLLMMultiModalInput, image.image_content),
    OFF(RKLLMMultiModalInput, image.image_width), OFF(RKLLMMultiModalInput, image.image_height),
    OFF(RKLLMMultiModalInput, video), OFF(RKLLMMultiModalInput, video.video_embed),
    OFF(RKLLMMultiModalInput, video.n_frame_tokens), OFF(RKLLMMultiModalInput, video.n_frame_per_video),
    OFF(RKLLMMultiModalInput, video.n_video), OFF(RKLLMMultiModalInput, video.video_start),
    OFF(RKLLMMultiModalInput, video.video_end), OFF(RKLLMMultiModalInput, video.video_content),
    OFF(RKLLMMultiModalInput, video.frame_width), OFF(RKLLMMultiModalInput, video.frame_height),

    SZ(RKLLMInput), OFF(RKLLMInput, role), OFF(RKLLMInput, enable_thinking), OFF(RKLLMInput, input_type),
    OFF(RKLLMInput, prompt_input), OFF(RKLLMInput, embed_input), OFF(RKLLMInput, token_input),
    OFF(RKLLMInput, multimodal_input),

    SZ(RKLLMLoraParam), OFF(RKLLMLoraParam, lora_adapter_name),
    SZ(RKLLMPromptCacheParam), OFF(RKLLMPromptCacheParam, save_prompt_cache),
    OFF(RKLLMPromptCacheParam, prompt_cache_path),

    SZ(RKLLMCrossAttnParam), OFF(RKLLMCrossAttnParam, encoder_k_cache), OFF(RKLLMCrossAttnParam, encoder_v_cache),
    OFF(RKLLMCrossAttnParam, encoder_mask), OFF(RKLLMCrossAttnParam, encoder_pos),
    OFF(RKLLMCrossAttnParam, num_tokens),

    SZ(RKLLMSamplingParam), OFF(RKLLMSamplingParam, top_k), OFF(RKLLMSamplingParam, top_p),
    OFF(RKLLMSamplingParam, temperature), OFF(RKLLMSamplingParam, repeat_penalty),
    OFF(RKLLMSamplingParam, frequency_penalty), OFF(RKLLMSamplingParam, presence_penalty),
    OFF(RKLLMSamplingParam, mirostat), OFF(RKLLMSamplingParam, mirostat_tau), OFF(RKLLMSamplingParam, mirostat_eta),

    SZ(RKLLMInferParam), OFF(RKLLMInferParam, mode), OFF(RKLLMInferParam, lora_params),
    OFF(RKLLMInferParam, prompt_cache_params), OFF(RKLLMInferParam, sampling_params),
    OFF(RKLLMInferParam, keep_history), OFF(RKLLMInferParam, max_new_tokens),

    SZ(RKLLMResultLastHiddenLayer), OFF(RKLLMResultLastHiddenLayer, hidden_states),
    OFF(RKLLMResultLastHiddenLayer, embd_size), OFF(RKLLMResultLastHiddenLayer, num_tokens),
    SZ(RKLLMResultLogits), OFF(RKLLMResultLogits, logits), OFF(RKLLMResultLogits, vocab_size),
    OFF(RKLLMResultLogits, num_tokens),

    SZ(RKLLMPerfStat), OFF(RKLLMPerfStat, prefill_time_ms), OFF(RKLLMPerfStat, prefill_tokens),
    OFF(RKLLMPerfStat, generate_time_ms), OFF(RKLLMPerfStat, generate_tokens), OFF(RKLLMPerfStat, memory_usage_mb),

    SZ(RKLLMResult), OFF(RKLLMResult, text), OFF(RKLLMResult, token_id), OFF(RKLLMResult, last_hidden_layer),
    OFF(RKLLMResult, logits), OFF(RKLLMResult, perf),

    SZ(RKLLMCallback), OFF(RKLLMCallback, result_callback), OFF(RKLLMCallback, result_userdata),
    OFF(RKLLMCallback, tokenizer_callback), OFF(RKLLMCallback, tokenizer_userdata),
    OFF(RKLLMCallback, embed_callback), OFF(RKLLMCallback, embed_userdata),
};

/* sizeof("Struct") or offsetof("Struct.member"), bytes; (size_t)-1 for an unknown name. */
EXPORT size_t rkllm_stub_layout(const char* name) {
    for (size_t i = 0; i < sizeof k_layout / sizeof k_layout[0]; i++)
        if (!strcmp(k_layout[i].name, name)) return k_layout[i].value;
    return (size_t)-1;
}

/* "Struct Struct.member ..." : every name rkllm_stub_layout knows, space-separated. */
EXPORT const char* rkllm_stub_layout_names(void) {
    static char buf[8192];
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof k_layout / sizeof k_layout[0] && n < sizeof buf - 1; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? " " : "", k_layout[i].name);
    return buf;
}

/* What rkllm_init received, then what the last rkllm_run received ("key=value" lines). */
EXPORT const char* rkllm_stub_describe(LLMHandle handle) {
    static __thread char buf[10240];
    StubHandle* h = handle;
    if (!h) return "";
    snprintf(buf, sizeof buf, "%s%s", h->init_desc, h->last_run);
    return buf;
}

EXPORT int rkllm_stub_max_concurrent(void) { return __atomic_load_n(&g_max_concurrent, __ATOMIC_SEQ_CST); }

EXPORT void rkllm_stub_reset_counters(void) { __atomic_store_n(&g_max_concurrent, 0, __ATOMIC_SEQ_CST); }
