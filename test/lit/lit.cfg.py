# lit configuration for llmc's IR, pass and importer tests.
import os

import lit.formats

config.name = "llmc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.llmc_obj_root, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.llmc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.environment["LLMC_BACKEND_PATH"] = config.llmc_tools_dir
import sys
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%data", config.llmc_data_dir))
config.substitutions.append(("%models", os.path.join(config.llmc_data_dir, "models")))
