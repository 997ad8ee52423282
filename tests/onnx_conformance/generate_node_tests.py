#!/usr/bin/python3
"""Writes ONNX's backend node test cases (model.onnx + test_data_set_*/{input,output}_*.pb)
into OUT_DIR/node with the generator the installed onnx package ships.

The generator still names numpy's removed aliases (np.float, np.int, ...); numpy 1.24
dropped them, so they are put back as the builtins they stood for before it is imported.
The cases are written into a temporary directory beside OUT_DIR and renamed into place,
so an interrupted run leaves no half-written suite.
"""
import builtins
import os
import shutil
import sys
import tempfile
import warnings


def main():
    if len(sys.argv) != 2:
        raise SystemExit('usage: generate_node_tests.py OUT_DIR')
    out = os.path.abspath(sys.argv[1])
    import numpy as np
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for name in ('float', 'int', 'bool', 'object', 'complex'):
            if name not in np.__dict__:
                setattr(np, name, getattr(builtins, name))
    import onnx
    from onnx.backend.test.cmd_tools import generate_data
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='.node_tests.', dir=parent)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            generate_data(type('Args', (), {'output': tmp, 'op_type': None})())
        with open(os.path.join(tmp, 'ONNX_VERSION'), 'w') as f:
            f.write(onnx.__version__ + '\n')
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    count = len(os.listdir(os.path.join(out, 'node')))
    print(f'{count} node test cases of onnx {onnx.__version__} in {out}/node')


if __name__ == '__main__':
    main()
