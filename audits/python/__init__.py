"""The Python scanner's parts, in the order a file goes through them (entry: audits/python_scan.py):

``plan`` (catalogue match specs -> lookup tables), ``hits`` (lines holding a CUDA token or a CUDA
alias), ``segments`` (parse only the pieces holding them), ``visitor`` (``ast`` walk with import
resolution through ``audits.resolve``), ``findings`` (positions, branches, suppression, messages).
"""
