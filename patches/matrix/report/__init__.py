"""Views of the matrix (``matrix.json`` is canonical): ``grid`` (the op x (device, dtype) pivot
every view uses), ``markdown``, ``junit``, ``html``; ``write`` writes them all."""
