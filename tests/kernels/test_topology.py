"""Topology presets and Neuron env vars (pure Python, no device)."""

import pytest

from kernels.trainium.topology import (
    PRESETS,
    GiB,
    TopologyError,
    from_env,
    parse_bytes,
    parse_core_list,
)


def test_presets_match_the_documented_chips():
    assert (PRESETS["trn1"].physical_cores_per_chip, PRESETS["trn1"].hbm_bytes_per_chip) == (
        2,
        32 * GiB,
    )
    assert (PRESETS["trn2"].physical_cores_per_chip, PRESETS["trn2"].hbm_bytes_per_chip) == (
        8,
        96 * GiB,
    )
    assert PRESETS["trn3"].hbm_bytes_per_chip == 144 * GiB
    assert PRESETS["trn2"].default_lnc == 2 and PRESETS["trn1"].allowed_lnc == (1,)


@pytest.mark.parametrize(
    "env, count, hbm",
    [
        ({"HN_TRN_PRESET": "trn1", "HN_TRN_CHIPS": "1"}, 2, 16 * GiB),
        ({"HN_TRN_PRESET": "trn2", "HN_TRN_CHIPS": "1"}, 4, 24 * GiB),  # LNC=2 default: 4 logical
        (
            {"HN_TRN_PRESET": "trn2", "HN_TRN_CHIPS": "1", "NEURON_LOGICAL_NC_CONFIG": "1"},
            8,
            12 * GiB,
        ),
        ({"HN_TRN_PRESET": "trn3", "HN_TRN_CHIPS": "1"}, 4, 36 * GiB),
        ({"HN_TRN_PRESET": "trn1"}, 8, 16 * GiB),  # default chips: 8 devices
        ({}, 8, 24 * GiB),  # default preset trn2, 2 chips
    ],
)
def test_device_count_and_share_of_hbm(env, count, hbm):
    topo = from_env(env)
    assert topo.device_count == count
    assert all(topo.hbm_capacity(i) == hbm for i in range(count))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0-3", (0, 1, 2, 3)),
        ("1,5", (1, 5)),
        ("3", (3,)),
        ("0-1, 6", (0, 1, 6)),
        ("5,1,1", (1, 5)),
    ],
)
def test_visible_core_lists(text, expected):
    assert parse_core_list(text, 8) == expected


def test_visible_cores_select_and_renumber_devices():
    topo = from_env(
        {"HN_TRN_PRESET": "trn2", "NEURON_LOGICAL_NC_CONFIG": "1", "NEURON_RT_VISIBLE_CORES": "1,5"}
    )
    assert topo.device_count == 2
    props = topo.properties(1)
    assert props.neuron_core_id == 5 and props.index == 1 and props.physical_cores == 1


def test_num_cores_limits_the_count_and_zero_means_all():
    assert from_env({"HN_TRN_PRESET": "trn2", "NEURON_RT_NUM_CORES": "3"}).visible == (0, 1, 2)
    assert from_env({"HN_TRN_PRESET": "trn2", "NEURON_RT_NUM_CORES": "0"}).device_count == 8


def test_visible_cores_win_over_num_cores_with_a_warning():
    with pytest.warns(RuntimeWarning, match="NEURON_RT_NUM_CORES=1 ignored"):
        topo = from_env({"NEURON_RT_VISIBLE_CORES": "2-3", "NEURON_RT_NUM_CORES": "1"})
    assert topo.visible == (2, 3)


@pytest.mark.parametrize(
    "env, message",
    [
        ({"HN_TRN_PRESET": "trn9"}, "unknown preset"),
        ({"HN_TRN_PRESET": "trn1", "NEURON_LOGICAL_NC_CONFIG": "2"}, "not supported on trn1"),
        ({"NEURON_LOGICAL_NC_CONFIG": "4"}, "allowed: 1, 2"),
        (
            {"NEURON_RT_VISIBLE_CORES": "0-8"},
            "core 8 does not exist; this instance has logical cores 0-7",
        ),
        ({"NEURON_RT_VISIBLE_CORES": "3-1"}, "end < start"),
        ({"NEURON_RT_VISIBLE_CORES": "a,b"}, "not a core id or range"),
        ({"NEURON_RT_NUM_CORES": "9"}, "has 8 logical cores"),
        ({"NEURON_RT_NUM_CORES": "two"}, "expected an integer"),
        (
            {"HN_TRN_PRESET": "trn2", "NEURON_LOGICAL_NC_CONFIG": "1", "HN_TRN_CHIPS": "9"},
            "at most 64 devices",
        ),
        ({"HN_TRN_HBM_BYTES": "lots"}, "not a byte size"),
    ],
)
def test_bad_env_is_a_clear_error(env, message):
    with pytest.raises(TopologyError, match=message):
        from_env(env)


def test_properties_report_name_memory_and_cores():
    topo = from_env({"HN_TRN_PRESET": "trn2"})
    p = topo.properties(0)
    assert p.name == "Trainium2 NeuronCore-v3 (LNC=2)"
    assert p.total_memory == 24 * GiB and p.physical_cores == 2 and p.logical_cores_per_chip == 4
    assert "Trainium2" in repr(p)
    with pytest.raises(IndexError, match="out of range: 8 visible"):
        topo.properties(8)


def test_hbm_override_and_byte_units():
    assert (
        parse_bytes("4096") == 4096
        and parse_bytes("64MiB") == 64 << 20
        and parse_bytes("2GiB") == 2 << 30
    )
    topo = from_env({"HN_TRN_HBM_BYTES": "1MiB"})
    assert topo.hbm_capacity(3) == 1 << 20
