"""drivers.npu.rknn.NpuRunner with a stand-in ``rknnlite`` package written into a tmp folder: each
way RKNNLite can fail (load, init, inference, wrong outputs, a failure later at run time) moves the
network to the CPU with the reason; a stand-in that answers like the CPU keeps it on the NPU. The
network is openWakeWord's real ``melspectrogram.onnx``; the ``.rknn`` file has the real container layout
(tests/rknnfile.py) around a payload naming that ONNX file. The real RKNNLite and librknnrt under qemu
are in tests/test_rknn_qemu.py."""
from __future__ import annotations

import logging
import sys
import textwrap

import numpy as np
import pytest

from drivers.npu.rknn import CORE_MASKS, NpuRunner, normalized_error
from drivers.npu.rknn_file import RknnFileError, check_rknn_file, check_runtime
from edge.stages.wake import openwakeword_models_dir
from tests import fakeroot
from tests.rknnfile import rknn_bytes, write_rknn

# rknnlite/api: RKNNLite with the lite2 constants; behaviour from $FAKE_RKNNLITE_MODE. Its NPU answer
# is the ONNX model named inside the dummy .rknn file, run with onnxruntime (the "good" NPU).
FAKE_RKNNLITE = '''
import os
import numpy as np
import onnxruntime as ort

CALLS = []


class RKNNLite:
    NPU_CORE_AUTO, NPU_CORE_0, NPU_CORE_1, NPU_CORE_2 = 0, 1, 2, 4
    NPU_CORE_0_1, NPU_CORE_0_1_2, NPU_CORE_ALL = 3, 7, 0xFFFF

    def __init__(self, verbose=False):
        self.mode = os.environ.get("FAKE_RKNNLITE_MODE", "good")
        self.session = None
        self.runs = 0

    def load_rknn(self, path):
        CALLS.append(("load_rknn", path))
        if self.mode == "load_fails":
            return -1
        onnx = open(path, "rb").read().split(b"ONNX:", 1)[1].split(b"\\n", 1)[0].decode()
        self.session = ort.InferenceSession(onnx, providers=["CPUExecutionProvider"])
        return 0

    def init_runtime(self, core_mask=NPU_CORE_AUTO):
        CALLS.append(("init_runtime", core_mask))
        return -1 if self.mode == "init_fails" else 0

    def inference(self, inputs=None):
        self.runs += 1
        CALLS.append(("inference", len(inputs)))
        if self.mode == "inference_raises" or (self.mode == "fails_later" and self.runs > 1):
            raise RuntimeError("rknn_run failed: unsupported op")
        feed = dict(zip([i.name for i in self.session.get_inputs()], inputs))
        out = self.session.run(None, feed)
        if self.mode == "wrong":
            out = [o * 1.5 + 1.0 for o in out]
        return out

    def release(self):
        CALLS.append(("release",))
'''


@pytest.fixture
def onnx_model():
    return openwakeword_models_dir() / "melspectrogram.onnx"


@pytest.fixture
def audio():
    """1280 samples (80 ms at 16 kHz) of a 440 Hz tone at int16 scale, as openWakeWord feeds it."""
    t = np.arange(1280) / 16000
    return [(0.3 * 32767 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)[None, :]]


@pytest.fixture
def rknnlite(tmp_path, monkeypatch):
    """The stand-in package on sys.path; yields its api module (its CALLS list records the calls)."""
    pkg = tmp_path / "site" / "rknnlite"
    (pkg / "api").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "api" / "__init__.py").write_text(textwrap.dedent(FAKE_RKNNLITE))
    for m in ("rknnlite", "rknnlite.api"):
        monkeypatch.delitem(sys.modules, m, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    import rknnlite.api

    yield rknnlite.api
    for m in ("rknnlite", "rknnlite.api"):
        sys.modules.pop(m, None)


@pytest.fixture
def rknn_file(tmp_path, onnx_model):
    return write_rknn(tmp_path / "melspectrogram_rk3588.rknn", graph=f"ONNX:{onnx_model}\n".encode())


def reference(onnx_model, inputs):
    import onnxruntime as ort

    s = ort.InferenceSession(str(onnx_model), providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: inputs[0]})


def test_a_good_npu_keeps_the_network_there(rknnlite, monkeypatch, onnx_model, rknn_file, audio):
    monkeypatch.setenv("FAKE_RKNNLITE_MODE", "good")
    r = NpuRunner(onnx_model, rknn_file, core_mask="0_1", check_inputs=audio)
    assert r.backend == "npu" and r.fallback_reason is None and r.check_error == 0.0
    assert ("init_runtime", 3) in rknnlite.CALLS  # "0_1" -> RKNNLite.NPU_CORE_0_1
    out = r.run(audio)
    np.testing.assert_allclose(out[0], reference(onnx_model, audio)[0], rtol=1e-6)
    assert rknnlite.CALLS[-1] == ("inference", 1)  # answered by the NPU stand-in
    r.close()
    assert rknnlite.CALLS[-1] == ("release",)


@pytest.mark.parametrize("mode, reason", [
    ("load_fails", "load_rknn"),
    ("init_fails", "init_runtime(core_mask=NPU_CORE_AUTO) returned -1"),
    ("inference_raises", "RKNNLite failed: RuntimeError: rknn_run failed"),
    ("wrong", "differ from the CPU reference"),
])
def test_each_npu_failure_moves_the_network_to_the_cpu(rknnlite, monkeypatch, caplog, onnx_model, rknn_file,
                                                       audio, mode, reason):
    monkeypatch.setenv("FAKE_RKNNLITE_MODE", mode)
    with caplog.at_level(logging.WARNING, logger="drivers.npu.rknn"):
        r = NpuRunner(onnx_model, rknn_file, check_inputs=audio)
    assert r.backend == "cpu"
    assert reason in r.fallback_reason
    assert any(reason in rec.getMessage() and "melspectrogram" in rec.getMessage() for rec in caplog.records)
    assert ("release",) in rknnlite.CALLS  # the NPU context is freed
    n_calls = len(rknnlite.CALLS)
    np.testing.assert_allclose(r.run(audio)[0], reference(onnx_model, audio)[0], rtol=1e-6)
    assert len(rknnlite.CALLS) == n_calls  # the answer came from onnxruntime, not the stand-in


def test_wrong_outputs_within_a_loose_tolerance_stay_on_the_npu(rknnlite, monkeypatch, onnx_model, rknn_file, audio):
    monkeypatch.setenv("FAKE_RKNNLITE_MODE", "wrong")
    r = NpuRunner(onnx_model, rknn_file, check_inputs=audio, tolerance=1e9)
    assert r.backend == "npu" and r.check_error > 0.05


def test_a_failure_later_at_run_time_moves_to_the_cpu(rknnlite, monkeypatch, onnx_model, rknn_file, audio):
    monkeypatch.setenv("FAKE_RKNNLITE_MODE", "fails_later")
    r = NpuRunner(onnx_model, rknn_file, check_inputs=audio)
    assert r.backend == "npu"
    out = r.run(audio)
    assert r.backend == "cpu" and "at run time" in r.fallback_reason
    np.testing.assert_allclose(out[0], reference(onnx_model, audio)[0], rtol=1e-6)


def test_without_rknnlite_or_rknn_file_the_cpu_runs_it(monkeypatch, tmp_path, onnx_model, audio):
    monkeypatch.setitem(sys.modules, "rknnlite", None)  # import fails, as on x86_64
    missing = NpuRunner(onnx_model, tmp_path / "absent.rknn", check_inputs=audio)
    assert missing.backend == "cpu" and "no such .rknn file" in missing.fallback_reason
    dummy = write_rknn(tmp_path / "m.rknn")
    no_pkg = NpuRunner(onnx_model, dummy, check_inputs=audio)
    assert no_pkg.backend == "cpu" and "rknnlite is not importable" in no_pkg.fallback_reason
    cpu_only = NpuRunner(onnx_model)
    assert cpu_only.fallback_reason == "no .rknn file configured"
    np.testing.assert_allclose(cpu_only.run(audio)[0], reference(onnx_model, audio)[0], rtol=1e-6)


def test_bad_arguments_are_refused_with_the_allowed_values(onnx_model, tmp_path):
    with pytest.raises(ValueError, match="0_1_2"):
        NpuRunner(onnx_model, core_mask="3")
    with pytest.raises(FileNotFoundError, match="nope.onnx"):
        NpuRunner(tmp_path / "nope.onnx")
    assert set(CORE_MASKS) == {"auto", "0", "1", "2", "0_1", "0_1_2", "all"}


def test_dynamic_inputs_need_a_check_input(rknnlite, monkeypatch, onnx_model, rknn_file):
    monkeypatch.setenv("FAKE_RKNNLITE_MODE", "good")
    with pytest.raises(ValueError, match="check_inputs"):
        NpuRunner(onnx_model, rknn_file)  # input 'input' is [batch_size, samples]


def test_normalized_error():
    ref = np.array([0.0, 2.0, -4.0])
    assert normalized_error(ref, ref) == 0.0
    assert normalized_error(ref + 0.4, ref) == pytest.approx(0.1)
    assert normalized_error(np.array([np.nan, 0, 0]), ref) == float("inf")


# ---------------------------------------------------------------- the file and runtime checks before load_rknn

@pytest.fixture(scope="module")
def runtimes(tmp_path_factory):
    """Stand-in librknnrt.so files carrying the real version strings (1.5.2 is the rknpu==1.5.2 wheel's)."""
    d = tmp_path_factory.mktemp("rt")
    return {v: fakeroot.compile_lib(d / f"librknnrt-{v}.so", "librknnrt", f"librknnrt version: {v} (c6b7b351a@2023)")
            for v in ("1.5.2", "2.3.2")}


def _sha(p):
    import hashlib

    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize("case, reason", [
    ("onnx", "not an RKNN model: first bytes"),
    ("truncated", "truncated"),
    ("rk3566", "converted for rk3566, this board is rk3588; convert the model with rknn-toolkit2 target_platform='rk3588'"),
    ("size", "the manifest says"),
    ("sha256", "SHA-256"),
    ("toolkit", "converted with rknn-toolkit2 1.6.0, the board config names 2.3.2"),
    ("runtime", "librknnrt 1.5.2, but the board config names 2.3.2"),
])
def test_a_wrong_file_or_runtime_never_reaches_load_rknn(rknnlite, monkeypatch, tmp_path, onnx_model, rknn_file,
                                                          runtimes, audio, case, reason):
    monkeypatch.setenv("FAKE_RKNNLITE_MODE", "good")
    good = rknn_file.read_bytes()
    expect = dict(soc="rk3588", rknn_size=len(good), rknn_sha256=_sha(rknn_file), model_version="2.3.2",
                  runtime_path=runtimes["2.3.2"])
    p = tmp_path / "model.rknn"
    p.write_bytes(good)
    if case == "onnx":
        p.write_bytes(onnx_model.read_bytes())
        expect.update(rknn_size=None, rknn_sha256=None)
    elif case == "truncated":
        p.write_bytes(good[:-20])
        expect.update(rknn_size=None, rknn_sha256=None)
    elif case in ("rk3566", "toolkit"):
        write_rknn(p, targets=["rk3566"] if case == "rk3566" else ["rk3588"],
                   toolkit="1.6.0" if case == "toolkit" else "2.3.2", graph=f"ONNX:{onnx_model}\n".encode())
        expect.update(rknn_size=None, rknn_sha256=None)
    elif case == "size":
        p.write_bytes(good + b"\0")
    elif case == "sha256":
        expect["rknn_sha256"] = "0" * 64  # the manifest's hash is another file's
    elif case == "runtime":
        expect["runtime_path"] = runtimes["1.5.2"]
    r = NpuRunner(onnx_model, p, check_inputs=audio, **expect)
    assert r.backend == "cpu" and reason in r.fallback_reason, r.fallback_reason
    assert str(p if case != "runtime" else runtimes["1.5.2"]) in r.fallback_reason  # names the file
    assert rknnlite.CALLS == []  # RKNNLite never saw it
    np.testing.assert_allclose(r.run(audio)[0], reference(onnx_model, audio)[0], rtol=1e-6)


@pytest.mark.parametrize("info, reason", [
    (b'["rk3588"]', 'the model information is ["rk3588"], not a JSON object'),
    (b"null", "the model information is null, not a JSON object"),
    (b'"rk3588"', "not a JSON object"),
    (b'{"target_platform": 5, "version": "2.3.2"}', "target_platform in the model information is 5"),
    (b'{"target_platform": [3588], "version": "2.3.2"}', "not a list of chip names"),
    (b'{"target_platform": ["rk3588"], "version": 2.3}', "version in the model information is 2.3"),
])
def test_hostile_model_information_is_a_clear_refusal_and_the_cpu_path(rknnlite, monkeypatch, tmp_path, onnx_model,
                                                                       audio, info, reason):
    monkeypatch.setenv("FAKE_RKNNLITE_MODE", "good")
    p = tmp_path / "model.rknn"
    p.write_bytes(rknn_bytes(graph=f"ONNX:{onnx_model}\n".encode(), info=info))
    r = NpuRunner(onnx_model, p, check_inputs=audio, soc="rk3588", model_version="2.3.2")
    assert r.backend == "cpu" and reason in r.fallback_reason and str(p) in r.fallback_reason, r.fallback_reason
    assert rknnlite.CALLS == []


def test_an_unreadable_file_with_a_manifest_hash_is_a_clear_refusal(tmp_path):
    d = tmp_path / "model.rknn"
    d.mkdir()  # open() fails on it as on a file the service user may not read
    with pytest.raises(RknnFileError, match="cannot read the .rknn file"):
        check_rknn_file(d, soc="rk3588", sha256="0" * 64)


def test_the_right_file_and_runtime_pass_and_sibling_socs_share_models(rknnlite, monkeypatch, tmp_path, onnx_model,
                                                                       rknn_file, runtimes, audio):
    monkeypatch.setenv("FAKE_RKNNLITE_MODE", "good")
    r = NpuRunner(onnx_model, rknn_file, check_inputs=audio, soc="rk3588s", rknn_size=rknn_file.stat().st_size,
                  rknn_sha256=_sha(rknn_file), model_version="2.3.1", runtime_path=runtimes["2.3.2"])
    assert r.backend == "npu", r.fallback_reason  # an RK3588S board runs rk3588 models; 2.3.x is one series
    assert check_rknn_file(write_rknn(tmp_path / "a.rknn", targets=["RK3566"]), soc="rk3568").target_platforms == ["rk3566"]
    with pytest.raises(RknnFileError, match="no RKNN runtime"):
        check_runtime(tmp_path / "none.so", "2.3.2")
