import unittest

import torch


class TestMove(unittest.TestCase):
    @unittest.skipIf(not torch.cuda.is_available(), "needs CUDA")
    def test_roundtrip(self):
        x = torch.ones(3).cuda()
        self.assertNotEqual(x.device.type, "cpu")
        self.assertEqual(x.cpu().sum().item(), 3.0)
