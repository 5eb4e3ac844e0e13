# Reserves an order's stock. The warehouse is busy the first two times an
# order asks (a count kept in $TMPDIR): the state's Retry asks again.
import json, os, sys, tempfile

order = json.load(sys.stdin)
path = os.path.join(tempfile.gettempdir(), "reserve-" + order["orderId"])
tries = int(open(path).read()) if os.path.exists(path) else 0
with open(path, "w") as f:
    f.write(str(tries + 1))
if tries < 2:
    print(json.dumps({"errorType": "Busy", "errorMessage": "the warehouse is busy, try again"}))
    sys.exit(1)
print(json.dumps({"reservation": "R-" + order["orderId"]}))
