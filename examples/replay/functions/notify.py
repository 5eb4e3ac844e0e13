# Tells the customer: the mail server is down today.
import json, sys

print(json.dumps({"errorType": "MailServerDown", "errorMessage": "connection refused"}))
sys.exit(1)
