#!/usr/bin/env python3
"""token_server.py SOCKET ANSWER_FILE - a token service on a Unix socket for
the e2e tests: each connection gets ANSWER_FILE's content, then the end of
the stream, and is logged ("served N").  Special answers:

    !close    close at once, nothing sent (an empty answer)
    !hang     send nothing for 30 s (longer than the 5 s deadline)
    !big      send 65537 bytes (one more than the 64 KiB cap)
"""
import os
import socket
import sys
import threading
import time

served = 0
lock = threading.Lock()


def serve(conn, answer_file):
    global served
    try:
        try:
            data = open(answer_file, "rb").read()
        except OSError:
            data = b"!close"
        with lock:
            served += 1
            print("served %d %s" % (served, data[:6].decode(errors="replace")), flush=True)
        if data.startswith(b"!hang"):
            time.sleep(30)
        elif data.startswith(b"!big"):
            conn.sendall(b"t" * 65537)
        elif not data.startswith(b"!close"):
            conn.sendall(data)
    except OSError:
        pass
    finally:
        conn.close()


def main():
    path, answer_file = sys.argv[1], sys.argv[2]
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, answer_file), daemon=True).start()


if __name__ == "__main__":
    main()
