# Prints a shipping label.
import json, sys

shipment = json.load(sys.stdin)
print(json.dumps({"tracking": "TRK-" + shipment["order"]}))
