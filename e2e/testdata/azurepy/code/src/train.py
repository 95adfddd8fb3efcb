from lib.util import GREETING
print(GREETING)
