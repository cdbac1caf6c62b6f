"""Sets or removes keys of a checkpoint's config.json in place:
edit_config.py DIR key=<json value> ... -key ..."""
import json
import os
import sys

path = os.path.join(sys.argv[1], "config.json")
config = json.load(open(path))
for arg in sys.argv[2:]:
    if arg.startswith("-"):
        config.pop(arg[1:], None)
    else:
        key, value = arg.split("=", 1)
        config[key] = json.loads(value)
json.dump(config, open(path, "w"), indent=2, sort_keys=True)
