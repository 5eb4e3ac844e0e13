# Prices one line of an order.
import json, sys

PRICES = {"tea": 4, "cup": 7}
line = json.load(sys.stdin)
print(json.dumps({"sku": line["sku"], "price": PRICES[line["sku"]] * line["qty"]}))
