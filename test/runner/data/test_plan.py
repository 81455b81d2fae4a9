"""Workers from the cores a rank really has, and a scan done once for all ranks."""

from __future__ import annotations

import os

import pytest

from ascend_finetune.data import plan as planmod
from ascend_finetune.data.demo import make_shapes
from ascend_finetune.spec import resolve


def _cgroup(tmp_path, limits: dict[str, str]):
    root = tmp_path / "cg"
    for rel, value in limits.items():
        d = root / rel
        d.mkdir(parents=True, exist_ok=True)
        (d / "cpu.max").write_text(value + "\n")
    proc = tmp_path / "proc_cgroup"
    proc.write_text("0::/kube/pod/ctr\n")
    return str(root), str(proc)


def test_cgroup_v2_quota_is_the_tightest_of_the_hierarchy(tmp_path):
    root, proc = _cgroup(
        tmp_path,
        {"": "max 100000", "kube/pod": "250000 100000", "kube/pod/ctr": "max 100000"},
    )
    assert planmod._cgroup_v2_cpus(root, proc) == 2.5
    assert planmod.available_cores(root, proc) == min(len(os.sched_getaffinity(0)), 3)
    root2, proc2 = _cgroup(tmp_path / "b", {"": "max 100000"})
    assert planmod._cgroup_v2_cpus(root2, proc2) is None


def test_default_workers_are_the_cores_per_rank(tmp_path):
    assert planmod.loader_workers(0, ranks_per_node=8, cores=192) == 24  # not 8 whatever the machine
    assert planmod.loader_workers(0, ranks_per_node=8, cores=4) == 1
    assert planmod.loader_workers(6, ranks_per_node=1, cores=4) == 4
    (tmp_path / "cls").mkdir()  # validate wants class folders under data.train
    assert resolve({"data": {"train": str(tmp_path)}})["data"]["workers"] == 0


def test_a_rank_reads_the_launchers_verified_plan_without_scanning(tmp_path, monkeypatch):
    root = tmp_path / "shapes"
    make_shapes(str(root), per_class=6, size=32, seed=4)
    (root / sorted(os.listdir(root))[0] / "broken.jpg").write_bytes(b"not a jpeg")
    spec = resolve(
        {
            "data": {"train": str(root), "batch_size": 4, "workers": 1},
            "device": {"ids": [0, 1]},
        }
    )
    scans = []
    real_scan = planmod.scan
    monkeypatch.setattr(planmod, "scan", lambda *a, **k: scans.append(a[0]) or real_scan(*a, **k))

    from ascend_finetune.distributed.prepare import prepare_data

    path = prepare_data(spec, str(tmp_path / "run"))
    assert len(scans) == 1 and os.path.basename(path) == planmod.PLAN_FILE
    launcher_plan = planmod.plan_data(spec, 2, [])
    scans.clear()
    for _rank in range(2):
        warnings: list = []
        p = planmod.plan_data(spec, 2, warnings, plan_file=path, ranks_per_node=2)
        assert (p.train_samples, p.val_samples, p.classes) == (
            launcher_plan.train_samples,
            launcher_plan.val_samples,
            launcher_plan.classes,
        )
        assert [w["code"] for w in warnings] == ["images_skipped"]  # rank 0 still reports them
    assert scans == []  # no rank scanned (or decoded) anything
    # A plan for another spec or world is not used.
    other = dict(spec, data={**spec["data"], "batch_size": 2})
    planmod.plan_data(other, 2, [], plan_file=path)
    planmod.plan_data(spec, 4, [], plan_file=path)
    assert len(scans) == 2


@pytest.mark.parametrize(
    "target,signs,supported,expect",
    [("Ascend", False, True, True), ("CPU", True, True, False)],
)
def test_bind_core_only_for_ascend_and_a_msrun_that_has_it(tmp_path, target, signs, supported, expect):
    from ascend_finetune.distributed import world
    from ascend_finetune.distributed.world import ENTRY_SCRIPT, msrun_argv

    (tmp_path / "cls").mkdir()  # validate wants class folders under data.train
    spec = resolve({"data": {"train": str(tmp_path)}, "device": {"target": target, "ids": [0, 1]}})
    argv = msrun_argv(spec, "/tmp/r", 0, 12345)
    out = world.bind_core_argv(spec, argv, supported=supported)
    assert ("--bind_core=True" in out) is expect
    if expect:
        assert out.index("--bind_core=True") == out.index(ENTRY_SCRIPT) - 1
    assert world.bind_core_argv(spec, argv, supported=False) == argv
    assert world.msrun_supports_bind_core()  # the installed MindSpore (2.10) has the flag
