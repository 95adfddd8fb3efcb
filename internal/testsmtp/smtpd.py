# A mail server for tests: Debian's aiosmtpd on 127.0.0.1:<argv[1]>,
# printing each message received as one JSON line, until stdin closes.
import json
import sys

from aiosmtpd.controller import Controller


class Printer:
    async def handle_DATA(self, server, session, envelope):
        print(json.dumps({"from": envelope.mail_from, "to": envelope.rcpt_tos,
                          "data": envelope.content.decode("utf-8", "replace")}), flush=True)
        return "250 OK"


controller = Controller(Printer(), hostname="127.0.0.1", port=int(sys.argv[1]))
controller.start()
print("READY", flush=True)
sys.stdin.read()
controller.stop()
