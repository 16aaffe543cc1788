/*
 * Types of the RKLLM C API, rkllm.h version 1.3.0, written for the stand-in library from the
 * header's declarations (not the vendor file): same names, same member order, same widths.
 * See drivers/npu/rkllm.py for where the 1.3.0 layout comes from.
 */
#ifndef RKLLM_STUB_H
#define RKLLM_STUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void* LLMHandle;

typedef enum {
    RKLLM_RUN_NORMAL = 0,
    RKLLM_RUN_WAITING = 1,
    RKLLM_RUN_FINISH = 2,
    RKLLM_RUN_ERROR = 3,
} LLMCallState;

typedef enum {
    RKLLM_INPUT_PROMPT = 0,
    RKLLM_INPUT_TOKEN = 1,
    RKLLM_INPUT_EMBED = 2,
    RKLLM_INPUT_MULTIMODAL = 3,
} RKLLMInputType;

typedef enum {
    RKLLM_INFER_GENERATE = 0,
    RKLLM_INFER_GET_LAST_HIDDEN_LAYER = 1,
    RKLLM_INFER_GET_LOGITS = 2,
} RKLLMInferMode;

typedef int (*LLMGetEmbedCallback)(void* userdata, int32_t* tokens, uint64_t num_tokens, void* embed, uint64_t len);
typedef int (*LLMTokenizerCallback)(void* userdata, const char* text, int32_t text_len, int32_t* tokens,
                                    int32_t n_tokens_max);

typedef struct {
    int32_t base_domain_id;
    int8_t embed_flash;
    int8_t enabled_cpus_num;
    uint32_t enabled_cpus_mask;
    uint8_t n_batch;
    int8_t use_cross_attn;
    uint8_t reserved[104];
} RKLLMExtendParam;

typedef struct {
    const char* model_path;
    int32_t max_context_len;
    int32_t max_new_tokens;
    int32_t top_k;
    int32_t n_keep;
    float top_p;
    float temperature;
    float repeat_penalty;
    float frequency_penalty;
    float presence_penalty;
    int32_t mirostat;
    float mirostat_tau;
    float mirostat_eta;
    bool skip_special_token;
    bool ignore_eos_token;
    bool is_async;
    RKLLMExtendParam extend_param;
} RKLLMParam;

typedef struct {
    const char* lora_adapter_path;
    const char* lora_adapter_name;
    float scale;
} RKLLMLoraAdapter;

typedef struct {
    float* embed;
    size_t n_tokens;
} RKLLMEmbedInput;

typedef struct {
    int32_t* input_ids;
    size_t n_tokens;
} RKLLMTokenInput;

typedef struct {
    char* prompt;
    struct {
        float* image_embed;
        size_t n_image_tokens;
        size_t n_image;
        const char* image_start;
        const char* image_end;
        const char* image_content;
        size_t image_width;
        size_t image_height;
    } image;
    struct {
        float* video_embed;
        size_t n_frame_tokens;
        size_t n_frame_per_video;
        size_t n_video;
        const char* video_start;
        const char* video_end;
        const char* video_content;
        size_t frame_width;
        size_t frame_height;
    } video;
} RKLLMMultiModalInput;

typedef struct {
    const char* role;
    bool enable_thinking;
    RKLLMInputType input_type;
    union {
        const char* prompt_input;
        RKLLMEmbedInput embed_input;
        RKLLMTokenInput token_input;
        RKLLMMultiModalInput multimodal_input;
    };
} RKLLMInput;

typedef struct {
    const char* lora_adapter_name;
} RKLLMLoraParam;

typedef struct {
    int save_prompt_cache;
    const char* prompt_cache_path;
} RKLLMPromptCacheParam;

typedef struct {
    float* encoder_k_cache;
    float* encoder_v_cache;
    float* encoder_mask;
    int32_t* encoder_pos;
    int num_tokens;
} RKLLMCrossAttnParam;

typedef struct {
    int32_t top_k;
    float top_p;
    float temperature;
    float repeat_penalty;
    float frequency_penalty;
    float presence_penalty;
    int32_t mirostat;
    float mirostat_tau;
    float mirostat_eta;
} RKLLMSamplingParam;

typedef struct {
    RKLLMInferMode mode;
    RKLLMLoraParam* lora_params;
    RKLLMPromptCacheParam* prompt_cache_params;
    RKLLMSamplingParam* sampling_params;
    int keep_history;
    int32_t max_new_tokens;
} RKLLMInferParam;

typedef struct {
    const float* hidden_states;
    int embd_size;
    int num_tokens;
} RKLLMResultLastHiddenLayer;

typedef struct {
    const float* logits;
    int vocab_size;
    int num_tokens;
} RKLLMResultLogits;

typedef struct {
    float prefill_time_ms;
    int prefill_tokens;
    float generate_time_ms;
    int generate_tokens;
    float memory_usage_mb;
} RKLLMPerfStat;

typedef struct {
    const char* text;
    int32_t token_id;
    RKLLMResultLastHiddenLayer last_hidden_layer;
    RKLLMResultLogits logits;
    RKLLMPerfStat perf;
} RKLLMResult;

typedef int (*LLMResultCallback)(RKLLMResult* result, void* userdata, LLMCallState state);

typedef struct {
    LLMResultCallback result_callback;
    void* result_userdata;
    LLMTokenizerCallback tokenizer_callback;
    void* tokenizer_userdata;
    LLMGetEmbedCallback embed_callback;
    void* embed_userdata;
} RKLLMCallback;

#endif
