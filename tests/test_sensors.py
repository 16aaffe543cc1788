"""drivers/sensors on fake kernel trees (tests/fakesys.py): every signal read with its unit, CPU load
from two /proc/stat readings, both rknpu load forms, and unknown signals (deleted, garbled, wrong
kind of file) tolerated with a reason that names the file."""
from __future__ import annotations

import pytest

from drivers.sensors import (
    SensorPaths,
    SensorReader,
    parse_meminfo,
    parse_npu_load,
    read_devfreq,
    read_meminfo,
    read_npu_load,
    read_policies,
    read_power,
    read_zones,
)
from drivers.sensors._read import parse_cpu_list
from tests.fakesys import RK3588_ZONES, npu_load_text, rk3588, x86_dev

MIB = 1024 * 1024


def rk_paths(fs, **kw) -> SensorPaths:
    return SensorPaths(root=fs.root, npu_load="/sys/kernel/debug/rknpu/load",
                       npu_devfreq="/sys/class/devfreq/fdab0000.npu", **kw)


def test_rk3588_tree_reads_every_signal_in_its_unit(tmp_path):
    fs = rk3588(tmp_path, total_mib=8192, available_mib=6000, temp_c=47.5, npu_load={0: 45, 1: 0, 2: 7})
    snap = SensorReader(rk_paths(fs)).read()
    assert snap.problems == ()
    assert snap.mem.total_bytes == 8192 * MIB and snap.mem.available_bytes == 6000 * MIB
    assert [(p.name, p.cpus, p.hw_max_khz) for p in snap.policies] == [
        ("policy0", (0, 1, 2, 3), 1_800_000), ("policy4", (4, 5), 2_400_000), ("policy6", (6, 7), 2_400_000)]
    assert [z.type for z in snap.zones] == list(RK3588_ZONES)
    assert all(z.temp_c == 47.5 for z in snap.zones)
    soc = snap.zones[0]
    assert [(t.temp_c, t.type, t.hyst_c) for t in soc.trips] == [
        (75.0, "passive", 2.0), (85.0, "passive", 2.0), (115.0, "critical", 2.0)]
    assert [t.temp_c for t in soc.passive_trips()] == [75.0, 85.0]
    assert [(t.temp_c, t.type) for t in snap.zones[1].trips] == [(115.0, "critical")]
    assert snap.npu_load.cores == {"core0": 0.45, "core1": 0.0, "core2": 0.07}
    assert (snap.npu_devfreq.cur_hz, snap.npu_devfreq.max_hz, snap.npu_devfreq.governor) == (
        1_000_000_000, 1_000_000_000, "simple_ondemand")
    assert [(p.key, p.watts) for p in snap.power] == [("ina226/power1", 4.2)]
    d = snap.to_dict()
    assert d["thermal"][0]["trips"][1] == {"index": 1, "temp_c": 85.0, "type": "passive", "hyst_c": 2.0}


def test_cpu_load_is_the_difference_of_two_readings(tmp_path):
    fs = rk3588(tmp_path)
    reader = SensorReader(rk_paths(fs))
    assert reader.read().cpu_load == {}  # one reading: no interval yet, and no problem reported for it
    fs.advance_cpu({0: 0.25, 4: 1.0, 5: 0.5})
    load = reader.read().cpu_load
    assert load["cpu0"] == 0.25 and load["cpu4"] == 1.0 and load["cpu5"] == 0.5 and load["cpu7"] == 0.0
    assert load["cpu"] == pytest.approx((0.25 + 1.0 + 0.5) / 8)
    snap = reader.read()  # the counters did not move
    assert snap.cpu_load == {}
    assert any("proc/stat" in p and "no CPU ticks elapsed" in p for p in snap.problems)


def test_x86_tree_uniform_policies_and_no_npu(tmp_path):
    fs = x86_dev(tmp_path, cpus=2)
    snap = SensorReader(SensorPaths(root=fs.root)).read()
    assert snap.problems == ()
    assert [p.cpus for p in snap.policies] == [(0,), (1,)]
    assert [(z.type, [t.type for t in z.trips]) for z in snap.zones] == [("acpitz", ["critical"]), ("x86_pkg_temp", [])]
    assert snap.npu_load is None and snap.npu_devfreq is None and snap.power == ()


@pytest.mark.parametrize("text, expected", [
    ("NPU load:  Core0: 45%, Core1:  0%, Core2:  0%,\n", {"core0": 0.45, "core1": 0.0, "core2": 0.0}),
    ("Core0:  45%, Core1:  0%, Core2:  0%,", {"core0": 0.45, "core1": 0.0, "core2": 0.0}),
    ("NPU load:  Core0: 100%, Core1:   %, Core2:   %,\n", {"core0": 1.0, "core1": 0.0, "core2": 0.0}),
    ("NPU load:  45%\n", {"npu": 0.45}),
    ("NPU load:   %\n", {"npu": 0.0}),
    ("12%", {"npu": 0.12}),
])
def test_npu_load_both_forms(text, expected):
    assert parse_npu_load(text) == expected


def test_npu_load_text_as_the_driver_writes_it_round_trips(tmp_path):
    assert npu_load_text({0: 45, 1: 0, 2: 3}) == "NPU load:  Core0: 45%, Core1:   %, Core2:  3%,\n"
    assert npu_load_text(45) == "NPU load: 45%\n"
    fs = rk3588(tmp_path)
    for loads, expected in (({0: 45, 1: 0, 2: 99}, {"core0": 0.45, "core1": 0.0, "core2": 0.99}), (60, {"npu": 0.6})):
        fs.set_npu_load(loads)
        assert read_npu_load(fs.path("sys/kernel/debug/rknpu/load")).cores == expected


@pytest.mark.parametrize("text", ["", "hello", "NPU load: Core0: 145%,", "Core0: abc%", "NPU load: 101%"])
def test_npu_load_garbage_is_refused(text):
    with pytest.raises(ValueError):
        parse_npu_load(text)


def test_missing_and_garbled_files_make_signals_unknown_with_the_file_named(tmp_path):
    fs = rk3588(tmp_path)
    reader = SensorReader(rk_paths(fs))
    reader.read()
    fs.remove("proc/meminfo")
    fs.write("sys/class/thermal/thermal_zone0/temp", "garbage\n")                 # soc-thermal
    fs.write("sys/class/thermal/thermal_zone1/temp", b"\xff\xfe\x00\x01")        # not text
    fs.write("sys/class/thermal/thermal_zone2/temp", "-273150\n")                 # sensor fault
    fs.remove("sys/class/thermal/thermal_zone3/temp")                             # littlecore
    fs.write("sys/class/thermal/thermal_zone0/trip_point_1_type", "lukewarm\n")
    fs.write("sys/kernel/debug/rknpu/load", "NPU load: ???\n")
    fs.write("sys/class/devfreq/fdab0000.npu/cur_freq", "fast\n")
    fs.remove("sys/devices/system/cpu/cpufreq/policy4/related_cpus")
    fs.remove("sys/devices/system/cpu/cpufreq/policy4/affected_cpus")
    fs.write("sys/devices/system/cpu/cpufreq/policy6/scaling_cur_freq", "\n")
    fs.remove("sys/class/hwmon/hwmon0/power1_input")
    fs.path("sys/class/hwmon/hwmon0/power1_input").mkdir()                      # a directory, not a file
    fs.write("proc/stat", "no cpu lines here\n")

    snap = reader.read()  # must not raise
    probs = "\n".join(snap.problems)
    root = str(fs.root)
    assert snap.mem.total_bytes is None and snap.mem.available_bytes is None
    assert f"{root}/proc/meminfo: missing" in probs
    temps = {z.type: z.temp_c for z in snap.zones}
    assert temps["soc-thermal"] is None and "thermal_zone0/temp: not an integer: 'garbage'" in probs
    assert temps["bigcore0-thermal"] is None and "thermal_zone1/temp: not text" in probs
    assert temps["bigcore1-thermal"] is None and "-273.15 °C is outside" in probs
    assert temps["littlecore-thermal"] is None and "thermal_zone3/temp: missing" in probs
    assert temps["center-thermal"] == 45.0  # the others are still read
    assert [t.index for t in snap.zones[0].trips] == [0, 2] and "unknown trip type 'lukewarm'" in probs
    assert snap.npu_load.cores == {} and "rknpu/load: not an rknpu load line" in probs
    assert snap.npu_devfreq.cur_hz is None and snap.npu_devfreq.max_hz == 1_000_000_000
    assert "fdab0000.npu/cur_freq: not an integer: 'fast'" in probs
    assert [p.name for p in snap.policies] == ["policy0", "policy6"] and "policy4/affected_cpus: missing" in probs
    assert snap.policies[1].cur_khz is None and "policy6/scaling_cur_freq: empty" in probs
    assert snap.power == () and "power1_input: is a directory" in probs
    assert snap.cpu_load == {} and "proc/stat: no cpu lines" in probs
    assert all(root in p for p in snap.problems)  # every reason names its file


def test_whole_directories_missing(tmp_path):
    reader = SensorReader(SensorPaths(root=tmp_path / "empty", npu_load="/sys/kernel/debug/rknpu/load",
                                      npu_devfreq="/sys/class/devfreq/fdab0000.npu"))
    snap = reader.read()
    assert (snap.mem.total_bytes, snap.policies, snap.zones, snap.npu_load.cores, snap.power) == (None, (), (), {}, ())
    # meminfo, stat, cpufreq, thermal, npu load, devfreq cur/min/max/governor, hwmon
    assert len(snap.problems) == 10, snap.problems
    assert any("sys/class/thermal: missing" in p for p in snap.problems)


def test_configured_zone_types_filter_and_report_absent_ones(tmp_path):
    fs = rk3588(tmp_path)
    zones, probs = read_zones(fs.path("sys/class/thermal"), ["soc-thermal", "npu-thermal", "package-thermal"])
    assert [z.type for z in zones] == ["soc-thermal", "npu-thermal"]
    assert probs == [f"{fs.path('sys/class/thermal')}: no thermal zone of type 'package-thermal' "
                     f"(configured in board sensors.thermal_zones)"]


def test_meminfo_units_and_missing_memavailable(tmp_path):
    assert parse_meminfo("MemTotal:  2048 kB\nHugePages_Total: 0\nbad line\n") == {"MemTotal": 2048 * 1024,
                                                                                   "HugePages_Total": 0}
    p = tmp_path / "meminfo"
    p.write_text("MemTotal:       4194304 kB\nMemFree:        1000 kB\n")
    mi = read_meminfo(p)
    assert mi.total_bytes == 4096 * MIB and mi.available_bytes is None
    assert mi.problems == (f"{p}: no MemAvailable line (kernel older than 3.14, or not a meminfo file)",)


def test_cpu_list_formats():
    assert parse_cpu_list("0 1 2 3") == (0, 1, 2, 3)
    assert parse_cpu_list("0-3,6") == (0, 1, 2, 3, 6)
    assert parse_cpu_list("4-5\n") == (4, 5)
    for bad in ("", "a", "3-1"):
        with pytest.raises(ValueError):
            parse_cpu_list(bad)


def test_individual_readers_on_missing_dirs(tmp_path):
    assert read_policies(tmp_path / "nope") == ([], [f"{tmp_path / 'nope'}: missing (no cpufreq driver: clusters unknown)"])
    assert read_power(tmp_path / "nope")[0] == []
    dv = read_devfreq(tmp_path / "nope")
    assert (dv.cur_hz, dv.governor, len(dv.problems)) == (None, None, 4)
