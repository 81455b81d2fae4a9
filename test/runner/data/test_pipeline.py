"""The pipeline feeds uint8 and the graph normalises: the same float32 values, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from ascend_finetune.data.demo import make_shapes
from ascend_finetune.data.folder import scan


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipe") / "shapes"
    make_shapes(str(root), per_class=8, size=48, seed=3)
    return scan(str(root), 2).samples


def _batches(samples, on_device, augment):
    from ascend_finetune.data.pipeline import make_dataset

    ds = make_dataset(samples, 32, 8, 2, True, augment, 7, drop_remainder=True, on_device=on_device)
    return [(x.asnumpy(), y.asnumpy()) for x, y in ds.create_tuple_iterator(num_epochs=1)]


@pytest.mark.parametrize("augment", [True, False])
def test_device_normalisation_is_bit_identical_to_the_host_pipeline(samples, augment):
    import mindspore as ms

    from ascend_finetune.data.pipeline import device_normalize

    ms.set_context(mode=ms.GRAPH_MODE)
    host = _batches(samples, False, augment)
    raw = _batches(samples, True, augment)
    assert raw[0][0].dtype == np.uint8 and host[0][0].dtype == np.float32
    assert raw[0][0].nbytes * 4 == host[0][0].nbytes  # a quarter of the bytes to copy
    norm = device_normalize()
    for (hx, hy), (rx, ry) in zip(host, raw):
        assert np.array_equal(hy, ry)
        assert np.array_equal(norm(ms.Tensor(rx)).asnumpy(), hx)  # exact, not allclose


def test_first_step_loss_is_identical_with_uint8_input(samples):
    """The whole compiled train step: host-normalised float32 in, or uint8 in and normalised in the graph."""
    import mindspore as ms
    from mindspore import nn

    from ascend_finetune.data.pipeline import MEAN, STD
    from ascend_finetune.models.amp import build_train_step
    from ascend_finetune.models.net import TransferNet
    from ascend_finetune.train.steps import normalized

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(0)
    net = TransferNet("resnet18", 4, 0)
    loss_fn = nn.CrossEntropyLoss()
    host_step = build_train_step(net, loss_fn, nn.Momentum(net.trainable_params(), 0.0, 0.9), None)
    dev_step = build_train_step(
        normalized(net, MEAN, STD), loss_fn, nn.Momentum(net.trainable_params(), 0.0, 0.9), None
    )
    (hx, hy), (rx, ry) = (
        _batches(samples, False, True)[0],
        _batches(samples, True, True)[0],
    )
    a = host_step(ms.Tensor(hx), ms.Tensor(hy)).asnumpy()[0]
    b = dev_step(ms.Tensor(rx), ms.Tensor(ry)).asnumpy()[0]
    assert np.isfinite(a) and a == b
