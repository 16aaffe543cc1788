"""Board configs: every board-configs/*.yaml loads through the board schema (edge/boards.py) and as
settings; the schema refuses what it must refuse, naming the file and the key."""
from __future__ import annotations

import pytest
import yaml

from edge import boards, config
from edge.boards import BoardError, BoardSpec, load_board
from edge.models import manifest as models

REQUIRED = {"rk3588-rock5b", "rk3588-orangepi5", "rk3576-rock4d", "rk3566-rock3c", "rpi5", "x86-dev"}


def test_the_issue_boards_exist():
    assert REQUIRED <= set(boards.board_names())


@pytest.mark.parametrize("name", boards.board_names())
def test_every_board_file_loads_through_the_schema(name):
    spec = load_board(name)
    assert spec.name == name
    settings = config.load_settings(board=name)
    # recommended models are real manifest ids, and the file's LLM is one of them
    ids = set(models.load_manifest().ids)
    assert set(spec.models.recommended) <= ids, set(spec.models.recommended) - ids
    assert settings.llm.model in spec.models.recommended
    # the unit's MemoryMax keeps the 30 % reserve
    assert spec.service.memory_max_mib <= spec.ram_mib * 0.7
    assert spec.power_budget_w > 0
    cores = [c for cl in spec.cpu_clusters for c in cl.cores]
    assert len(cores) == len(set(cores))
    for z in spec.thermal_zones:
        assert [t.temp_c for t in z.trips] == sorted(t.temp_c for t in z.trips)
    # the OS image it was checked against, and what edge install needs from it
    assert spec.image is not None and tuple(map(int, spec.image.python.split("."))) >= (3, 10)


def test_rk3566_is_cpu_only_and_the_npu_boards_name_node_group_and_mask():
    assert load_board("rk3566-rock3c").cpu_only
    assert load_board("rpi5").cpu_only and load_board("x86-dev").cpu_only
    for name, cores, mask in (("rk3588-rock5b", 3, 0x7), ("rk3588-orangepi5", 3, 0x7), ("rk3576-rock4d", 2, 0x3)):
        npu = load_board(name).npu
        assert npu is not None and npu.rkllm_supported
        assert (npu.cores, npu.core_mask) == (cores, mask)
        assert npu.device_node == "/dev/dri/renderD129" and npu.device_group == "render"
        assert npu.devfreq_path.startswith("/sys/class/devfreq/") and npu.devfreq_path.endswith(".npu")
        assert {r.name for r in npu.runtimes} == {"librknnrt", "librkllmrt"}
    assert load_board("rk3588-rock5b").supplementary_groups == ["audio", "render"]
    assert load_board("rk3566-rock3c").supplementary_groups == ["audio"]


def test_rk3588_zones_match_the_bsp_device_tree():
    spec = load_board("rk3588-rock5b")
    soc = next(z for z in spec.thermal_zones if z.name == "soc-thermal")
    assert [(t.temp_c, t.type) for t in soc.trips] == [(75, "passive"), (85, "passive"), (115, "critical")]
    assert "package-thermal" in soc.aliases  # the mainline name of the same sensor
    assert {z.name for z in spec.thermal_zones} >= {"bigcore0-thermal", "npu-thermal", "gpu-thermal"}


def _raw(name):
    return yaml.safe_load((config.BOARD_DIR / f"{name}.yaml").read_text())


def test_rkllm_on_a_cpu_only_soc_is_refused(tmp_path):
    board = _raw("rk3588-rock5b")["board"]
    board["npu"]["rkllm_supported"] = False  # e.g. someone copies the RK3588 block to an RK3566 board
    with pytest.raises(BoardError) as e:
        boards.parse_board(board, tmp_path / "x.yaml")
    assert "rkllm_supported" in str(e.value) and "x.yaml" in str(e.value)


@pytest.mark.parametrize("mutate, key, words", [
    (lambda b: b.update(ram_mb=1), "board.ram_mb", "unknown key"),
    (lambda b: b["service"].update(memory_max_mib=8000), "board", "30 % reserve"),
    (lambda b: b["npu"].update(core_mask=8), "board.npu", "beyond the 3 cores"),
    (lambda b: b["thermal_zones"][0].update(trips=[{"temp_c": 90, "type": "critical"}, {"temp_c": 80, "type": "passive"}]),
     "board.thermal_zones.0.trips", "ascending"),
    (lambda b: b.pop("models"), "board.models", "missing"),
    (lambda b: b["npu"]["runtimes"][0].update(model_version="two"), "board.npu.runtimes.0.model_version", ""),
])
def test_the_schema_names_the_file_and_key(tmp_path, mutate, key, words):
    board = _raw("rk3588-rock5b")["board"]
    mutate(board)
    with pytest.raises(BoardError) as e:
        boards.parse_board(board, tmp_path / "broken.yaml")
    msg = str(e.value)
    assert "broken.yaml" in msg and key in msg and words in msg


def test_a_board_file_whose_llm_is_not_recommended_is_refused(tmp_path, monkeypatch):
    d = tmp_path / "board-configs"
    d.mkdir()
    raw = _raw("x86-dev")
    raw["board"]["name"] = "my-board"
    raw["board"]["models"]["recommended"] = ["silero-vad"]
    (d / "my-board.yaml").write_text(yaml.safe_dump(raw))
    monkeypatch.setattr(config, "BOARD_DIR", d)
    monkeypatch.setattr(boards, "BOARD_DIR", d)
    with pytest.raises(BoardError) as e:
        load_board("my-board")
    assert "llm.model" in str(e.value) and "recommended" in str(e.value)


def test_an_unknown_board_lists_the_known_ones():
    with pytest.raises(config.ConfigError) as e:
        load_board("rk9999")
    assert "rk3588-rock5b" in str(e.value)


def test_npu_none_means_cpu_only():
    spec = BoardSpec.model_validate({**_raw("x86-dev")["board"]})
    assert spec.npu is None and spec.cpu_only


@pytest.mark.parametrize("name", boards.board_names())
def test_a_board_names_the_rkllm_runtime_series_the_binding_accepts(name):
    """The doctor wants the board config's librkllmrt version; the engine wants the series its ctypes
    mirror of rkllm.h binds: one runtime must satisfy both."""
    from drivers.npu.rkllm import check_runtime_version

    spec = load_board(name)
    wanted = [rt.model_version for rt in (spec.npu.runtimes if spec.npu else []) if rt.name == "librkllmrt"]
    for version in wanted:
        check_runtime_version(version)  # raises RkllmVersionError for another series
