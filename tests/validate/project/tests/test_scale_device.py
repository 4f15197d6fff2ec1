import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests, onlyCUDA
from torch.testing._internal.common_utils import TestCase, run_tests

from devlib import pick_device, scale


class TestScale(TestCase):
    def test_scale_matches_reference(self, device):
        x = torch.arange(6.0, device=device)
        self.assertEqual(scale(x, 3).cpu(), torch.arange(6.0) * 3)

    def test_pick_device_allocates(self, device):
        x = torch.ones(2, device=pick_device())
        self.assertEqual(x.sum().item(), 2.0)

    @onlyCUDA
    def test_scale_stays_on_device(self, device):
        x = torch.arange(4.0, device=device)
        y = scale(x, 2)
        self.assertEqual(y.device.type, torch.device(device).type)
        self.assertEqual(y.cpu(), torch.arange(4.0) * 2)


instantiate_device_type_tests(TestScale, globals())

if __name__ == "__main__":
    run_tests()
