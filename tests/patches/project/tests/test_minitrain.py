import unittest

import torch
from torch.testing._internal.common_utils import TEST_CUDA, TestCase, run_tests

from minitrain import pick_device, time_call
from minitrain.runtime import visible_devices


class TestRuntime(TestCase):
    @unittest.skipIf(not TEST_CUDA, "needs CUDA")
    def test_pick_device(self):
        dev = pick_device(0)
        self.assertEqual(dev.index, torch.cuda.current_device())

    @unittest.skipIf(not torch.cuda.is_available(), "needs CUDA")
    def test_visible(self):
        self.assertGreater(visible_devices(), 0)

    @unittest.skipIf(not TEST_CUDA, "needs CUDA")
    def test_time(self):
        x = torch.randn(64, 64, device="cuda")
        ms, peak = time_call(torch.mm, x, x)
        self.assertGreater(ms, 0)
        self.assertGreater(peak, 0)


if __name__ == "__main__":
    run_tests()
