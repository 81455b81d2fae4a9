// The Python the air-gapped copy runs on the target (weightsCopy.ts says what it does and why): argv
// `MODE ROOT REL SHA256 [OFFSET SIZE IDLE_S]`, MODE `check` or `put`, the bytes of a put on stdin; one
// JSON line answers, `{"status": ...}` with values, never a sentence. Kept apart from its driver because
// it is a program of its own, in another language, that runs on another machine.
export const COPY_SCRIPT = String.raw`
import errno, hashlib, json, os, select, stat, sys
try:
    import fcntl
except ImportError:
    fcntl = None
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
OPATH = getattr(os, "O_PATH", 0)
# A FIFO planted in the cache opens at once (not blocking the copy) and is refused as not regular.
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
def answer(code, status, **values):
    values["status"] = status
    sys.stdout.write(json.dumps(values) + "\n")
    sys.stdout.flush()
    sys.exit(code)
mode, root, rel, want = sys.argv[1:5]
parts = rel.split("/")
if rel.startswith("/") or ".." in parts or "." in parts or "" in parts:
    answer(2, "bad-path", rel=rel)
if not root:
    root = os.environ.get("ASCEND_FINETUNE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "ascend-finetune")
root = os.path.abspath(os.path.expanduser(root))
dest = os.path.join(root, "weights", *parts)
name = parts[-1]
def folder(create):
    # The folder dest goes in, as a descriptor; None when missing (and not made). The cache root is
    # the user's choice and followed; every folder below it (weights/ on) is opened through its
    # parent's descriptor without following a symlink, unless the link is this user's or root's
    # (download.py's rule): another user's link in a shared cache is refused, nothing written through it.
    if create:
        os.makedirs(root, exist_ok=True)
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return None
    at = root
    for step in ["weights"] + parts[:-1]:
        at = os.path.join(at, step)
        try:
            try:
                nxt = os.open(step, os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                try:
                    os.mkdir(step, 0o777, dir_fd=fd)  # never follows a symlink: EEXIST
                except FileExistsError:
                    pass  # made meanwhile, or a dangling symlink: the open decides
                nxt = os.open(step, os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW, dir_fd=fd)
        except OSError as e:
            if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            # The link's owner and target read through one descriptor of the link itself, so it
            # cannot be swapped between the check and the read (download.py's _trusted_link).
            link = os.open(step, OPATH | NOFOLLOW, dir_fd=fd) if OPATH else None
            try:
                st = os.fstat(link) if OPATH else os.stat(step, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISLNK(st.st_mode):
                    raise
                if not OPATH or st.st_uid not in (os.getuid(), 0):  # not Linux: no link is followed
                    os.close(fd)
                    answer(6, "unsafe", path=at, uid=st.st_uid)
                to = os.readlink("", dir_fd=link)
            finally:
                if link is not None:
                    os.close(link)
            try:
                nxt = os.open(to, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)  # relative to the link's folder
            finally:
                os.close(fd)
        else:
            os.close(fd)
        fd = nxt
    return fd
def regular(d, n, flags):
    # A descriptor of the regular file n in folder d, never through a symlink.
    f = os.open(n, flags | NOFOLLOW | NONBLOCK, 0o644, dir_fd=d)
    if not stat.S_ISREG(os.fstat(f).st_mode):
        os.close(f)
        raise OSError(errno.EINVAL, "not a regular file", os.path.join(os.path.dirname(dest), n))
    return f
def sha(f):
    os.lseek(f, 0, os.SEEK_SET)
    h = hashlib.sha256()
    for b in iter(lambda: os.read(f, 1 << 20), b""):
        h.update(b)
    return h.hexdigest()
def check():
    have, size = None, 0
    d = folder(False)
    if d is not None:
        try:
            f = regular(d, name, os.O_RDONLY)
        except OSError:
            f = None  # missing, a symlink or not a regular file: not there
        if f is not None:
            try:
                have = sha(f)
            finally:
                os.close(f)
        try:
            st = os.stat(name + ".part", dir_fd=d, follow_symlinks=False)
            size = st.st_size if stat.S_ISREG(st.st_mode) else 0
        except FileNotFoundError:
            pass
        os.close(d)
    answer(0, "ok", dest=dest, sha256=have, part=size)
def put():
    offset, size = int(sys.argv[5]), int(sys.argv[6])
    # A link that drops without a clean end leaves stdin open and silent (sshd notices after hours):
    # after idle seconds without a byte the bytes so far stay and this process lets go of the locks.
    idle = float(sys.argv[7]) if len(sys.argv) > 7 else 60.0
    d = folder(True)
    # The lock a download of the same source on the target holds from its first byte to the rename
    # (download.py's <file>.lock): a copy and a download never write one .part at once.
    lock = os.open(name + ".lock", os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o644, dir_fd=d)
    if fcntl:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            answer(5, "busy", dest=dest)
    try:
        # Where a download's .part came from (download.py's <file>.part.json): the bytes are the copy's now.
        os.unlink(name + ".part.json", dir_fd=d)
    except FileNotFoundError:
        pass
    fd = regular(d, name + ".part", os.O_RDWR | os.O_CREAT)
    if fcntl:
        try:
            # An earlier copy's process whose link dropped may still be writing.
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            answer(5, "busy", dest=dest)
    have = os.fstat(fd).st_size
    if have < offset:
        answer(3, "incomplete", dest=dest, part=have, size=size)
    os.ftruncate(fd, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    got = offset
    src = sys.stdin.fileno()
    while True:
        if not select.select([src], [], [], idle)[0]:
            break  # nothing for idle seconds
        # What has arrived, written at once: check sees every byte that came.
        b = os.read(src, 1 << 20)
        if not b:
            break
        keep = memoryview(b)[: max(size - got, 0)]
        got += len(b)
        while keep:
            keep = keep[os.write(fd, keep) :]
        if got > size:
            break
    if got > size:
        os.unlink(name + ".part", dir_fd=d)
        answer(1, "too-long", size=size)
    if got < size:
        answer(3, "incomplete", dest=dest, part=got, size=size)
    have = sha(fd)
    if have != want:
        os.unlink(name + ".part", dir_fd=d)
        answer(1, "sha256-mismatch", got=have, want=want)
    os.replace(name + ".part", name, src_dir_fd=d, dst_dir_fd=d)
    st = os.fstat(fd)
    tmp = name + ".sha256.json." + str(os.getpid()) + ".tmp"
    f = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644, dir_fd=d)
    try:
        os.write(f, json.dumps({"sha256": have, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}).encode())
    finally:
        os.close(f)
    os.replace(tmp, name + ".sha256.json", src_dir_fd=d, dst_dir_fd=d)
    answer(0, "done", dest=dest, sha256=have)
try:
    check() if mode == "check" else put()
except OSError as e:
    answer(4, "os-error", detail=str(e))
`;
