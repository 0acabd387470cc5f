/*
 * mount.nfs for local instances: a user-space NFS client (libnfs) mounted through FUSE.
 *
 * This machine's kernel has no NFS client, so local mode installs this program as the local
 * instance's /sbin/mount.nfs (and mount.nfs4): mount(8) runs it for `mount -t nfs`, exactly as it
 * runs nfs-utils' mount.nfs on AWS. Every read, write and metadata call goes over the NFS protocol
 * (libnfs: RPC over TCP) to the server named by SOURCE; nothing reaches the server's disk another
 * way. The mount is up when this program returns; `umount DIR` ends it (the FUSE daemon exits).
 *
 * Usage (mount(8)'s helper convention): mount.nfs SERVER:/EXPORT DIR [-o OPTIONS] [-s -f -n -v -r -w]
 *
 * Options with an effect: nfsvers=/vers=3 (the only version: libnfs 4.0's NFSv4 client is not
 * functional, its own header says so; 4, 4.0, 4.1 are refused), rsize=, wsize=
 * (the largest READ/WRITE this client sends), port= (NFS port; 0 or absent: 2049), mountport= (MOUNT
 * port; absent: 20048; no portmapper is asked, the local server runs without one),
 * hard (retry for ever) / soft with timeo= (tenths of a second) and retrans=, ro/rw,
 * ac/noac/actimeo=/acregmin=/acregmax=/acdirmin=/acdirmax= (attribute caching, as FUSE timeouts),
 * proto=tcp/tcp, nolock (locks stay local, as the kernel's nolock), sec=sys.
 * Accepted without effect (they concern the kernel's page cache or privileged ports):
 * async, noatime, relatime, nodiratime, atime, strictatime, lazytime, noresvport, resvport, intr,
 * nointr, cto, nocto, defaults, _netdev, nofsc.
 * Anything else is refused, naming the option (exit 32, mount(8)'s "mount failure").
 */
#define FUSE_USE_VERSION 35
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <nfsc/libnfs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <unistd.h>

#define EXIT_USAGE 1
#define EXIT_FAILURE_MOUNT 32
/* No portmapper beside the local server: NFS where the standard puts it, MOUNT where Linux's mountd is */
#define DEFAULT_NFS_PORT 2049
#define DEFAULT_MOUNT_PORT 20048
#define MAX_IO (1024 * 1024)     /* Linux's largest rsize/wsize */

struct options {
    int version;        /* 3 or 4 */
    uint32_t rsize, wsize;
    int port, mountport;
    int soft, timeo_ds, retrans;
    int readonly;
    double attr_timeout, entry_timeout;
    int nolock;
};

static struct nfs_context *nfs;
static struct options opts;

static void fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mount.nfs: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

static long number(const char *name, const char *value, long low, long high)
{
    char *end;
    errno = 0;
    long parsed = strtol(value ? value : "", &end, 10);
    if (!value || !*value || *end || errno || parsed < low || parsed > high)
        fail(EXIT_USAGE, "option %s=%s: expected an integer from %ld to %ld", name, value ? value : "",
             low, high);
    return parsed;
}

static int is(const char *option, const char *const *names)
{
    for (; *names; names++)
        if (!strcmp(option, *names))
            return 1;
    return 0;
}

static void parse_options(char *list, struct options *o)
{
    static const char *const no_effect[] = {"async", "noatime", "relatime", "nodiratime", "atime",
                                            "strictatime", "lazytime", "noresvport", "resvport",
                                            "intr", "nointr", "cto", "nocto", "defaults", "_netdev",
                                            "nofsc", NULL};
    double acregmin = 3, acregmax = 60, acdirmin = 30, acdirmax = 60;
    int noac = 0;
    for (char *save = NULL, *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *value = strchr(item, '=');
        if (value)
            *value++ = '\0';
        if (!strcmp(item, "nfsvers") || !strcmp(item, "vers")) {
            if (strcmp(value ? value : "", "3"))
                fail(EXIT_USAGE,
                     "option %s=%s: this client speaks NFSv3 only (libnfs 4.0's NFSv4 is not functional, "
                     "its header says so); allowed: %s=3",
                     item, value ? value : "", item);
            o->version = 3;
        } else if (!strcmp(item, "rsize")) {
            o->rsize = (uint32_t)number(item, value, 4096, MAX_IO);
        } else if (!strcmp(item, "wsize")) {
            o->wsize = (uint32_t)number(item, value, 4096, MAX_IO);
        } else if (!strcmp(item, "port")) {
            o->port = (int)number(item, value, 0, 65535);
        } else if (!strcmp(item, "mountport")) {
            o->mountport = (int)number(item, value, 1, 65535);
        } else if (!strcmp(item, "hard") && !value) {
            o->soft = 0;
        } else if ((!strcmp(item, "soft") || !strcmp(item, "softerr")) && !value) {
            o->soft = 1;
        } else if (!strcmp(item, "timeo")) {
            o->timeo_ds = (int)number(item, value, 1, 6000);
        } else if (!strcmp(item, "retrans")) {
            o->retrans = (int)number(item, value, 0, 100);
        } else if (!strcmp(item, "ro") && !value) {
            o->readonly = 1;
        } else if (!strcmp(item, "rw") && !value) {
            o->readonly = 0;
        } else if (!strcmp(item, "noac") && !value) {
            noac = 1;
        } else if (!strcmp(item, "ac") && !value) {
            noac = 0;
        } else if (!strcmp(item, "actimeo")) {
            acregmin = acregmax = acdirmin = acdirmax = (double)number(item, value, 0, 3600);
        } else if (!strcmp(item, "acregmin")) {
            acregmin = (double)number(item, value, 0, 3600);
        } else if (!strcmp(item, "acregmax")) {
            acregmax = (double)number(item, value, 0, 3600);
        } else if (!strcmp(item, "acdirmin")) {
            acdirmin = (double)number(item, value, 0, 3600);
        } else if (!strcmp(item, "acdirmax")) {
            acdirmax = (double)number(item, value, 0, 3600);
        } else if (!strcmp(item, "proto")) {
            if (strcmp(value ? value : "", "tcp"))
                fail(EXIT_USAGE, "option proto=%s: this client speaks TCP only; allowed: proto=tcp", value ? value : "");
        } else if (!strcmp(item, "tcp") && !value) {
            /* the only transport */
        } else if (!strcmp(item, "nolock") && !value) {
            o->nolock = 1;
        } else if (!strcmp(item, "lock") && !value) {
            fail(EXIT_USAGE, "option lock: this client has no NLM (network lock manager); use nolock");
        } else if (!strcmp(item, "sec")) {
            if (strcmp(value ? value : "", "sys"))
                fail(EXIT_USAGE, "option sec=%s: this client authenticates with AUTH_SYS only; allowed: sec=sys",
                     value ? value : "");
        } else if (!value && is(item, no_effect)) {
            /* concerns the kernel's caches or privileged ports: nothing to do here */
        } else {
            fail(EXIT_USAGE,
                 "unknown or unsupported option '%s%s%s' (allowed: nfsvers, vers, rsize, wsize, port, mountport, "
                 "hard, soft, softerr, timeo, retrans, ro, rw, ac, noac, actimeo, acregmin, acregmax, acdirmin, "
                 "acdirmax, proto=tcp, tcp, nolock, sec=sys, async, noatime, relatime, nodiratime, atime, "
                 "strictatime, lazytime, noresvport, resvport, intr, nointr, cto, nocto, defaults, _netdev, nofsc)",
                 item, value ? "=" : "", value ? value : "");
        }
    }
    /* FUSE keeps one timeout for attributes and one for names: the file and directory maxima */
    o->attr_timeout = noac ? 0 : (acregmax > acdirmax ? acregmax : acdirmax);
    o->entry_timeout = noac ? 0 : (acregmin > acdirmin ? acregmin : acdirmin);
}

/* ------------------------------------------------------------------ file system calls */

static int nfs_errno(int result) { return result < 0 ? result : 0; }

static void to_stat(const struct nfs_stat_64 *n, struct stat *st)
{
    memset(st, 0, sizeof(*st));
    st->st_dev = n->nfs_dev;
    st->st_ino = n->nfs_ino;
    st->st_mode = n->nfs_mode;
    st->st_nlink = n->nfs_nlink;
    st->st_uid = n->nfs_uid;
    st->st_gid = n->nfs_gid;
    st->st_rdev = n->nfs_rdev;
    st->st_size = n->nfs_size;
    st->st_blksize = n->nfs_blksize;
    st->st_blocks = n->nfs_blocks;
    st->st_atim.tv_sec = n->nfs_atime;
    st->st_atim.tv_nsec = n->nfs_atime_nsec;
    st->st_mtim.tv_sec = n->nfs_mtime;
    st->st_mtim.tv_nsec = n->nfs_mtime_nsec;
    st->st_ctim.tv_sec = n->nfs_ctime;
    st->st_ctim.tv_nsec = n->nfs_ctime_nsec;
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    struct nfs_stat_64 n;
    int rc = fi ? nfs_fstat64(nfs, (struct nfsfh *)(uintptr_t)fi->fh, &n) : nfs_stat64(nfs, path, &n);
    if (rc < 0)
        return rc;
    to_stat(&n, st);
    return 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t offset,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    struct nfsdir *dir;
    int rc = nfs_opendir(nfs, path, &dir);
    if (rc < 0)
        return rc;
    struct nfsdirent *entry;
    while ((entry = nfs_readdir(nfs, dir)) != NULL) {
        struct stat st = {.st_ino = entry->inode, .st_mode = entry->mode};
        if (fill(buf, entry->name, &st, 0, 0))
            break;
    }
    nfs_closedir(nfs, dir);
    return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
    struct nfsfh *fh;
    int flags = fi->flags & (O_ACCMODE | O_APPEND | O_TRUNC | O_SYNC);
    if (opts.readonly && (fi->flags & O_ACCMODE) != O_RDONLY)
        return -EROFS;
    int rc = nfs_open(nfs, path, flags, &fh);
    if (rc < 0)
        return rc;
    fi->fh = (uint64_t)(uintptr_t)fh;
    fi->direct_io = (fi->flags & O_DIRECT) ? 1 : 0;
    return 0;
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    struct nfsfh *fh;
    if (opts.readonly)
        return -EROFS;
    int rc = nfs_create(nfs, path, fi->flags & (O_ACCMODE | O_APPEND | O_TRUNC | O_SYNC | O_EXCL), mode, &fh);
    if (rc < 0)
        return rc;
    fi->fh = (uint64_t)(uintptr_t)fh;
    fi->direct_io = (fi->flags & O_DIRECT) ? 1 : 0;
    return 0;
}

static int op_read(const char *path, char *buf, size_t size, off_t offset, struct fuse_file_info *fi)
{
    struct nfsfh *fh = (struct nfsfh *)(uintptr_t)fi->fh;
    size_t done = 0;
    while (done < size) {
        size_t chunk = size - done < opts.rsize ? size - done : opts.rsize; /* one READ of at most rsize */
        int got = nfs_pread(nfs, fh, (uint64_t)(offset + done), chunk, buf + done);
        if (got < 0)
            return got;
        if (got == 0)
            break;
        done += (size_t)got;
    }
    return (int)done;
}

static int op_write(const char *path, const char *buf, size_t size, off_t offset, struct fuse_file_info *fi)
{
    struct nfsfh *fh = (struct nfsfh *)(uintptr_t)fi->fh;
    size_t done = 0;
    while (done < size) {
        size_t chunk = size - done < opts.wsize ? size - done : opts.wsize; /* one WRITE of at most wsize */
        int put = nfs_pwrite(nfs, fh, (uint64_t)(offset + done), chunk, buf + done);
        if (put < 0)
            return put;
        if (put == 0)
            return -EIO;
        done += (size_t)put;
    }
    return (int)done;
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
    return nfs_errno(nfs_close(nfs, (struct nfsfh *)(uintptr_t)fi->fh));
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    return nfs_errno(nfs_fsync(nfs, (struct nfsfh *)(uintptr_t)fi->fh));
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    if (fi)
        return nfs_errno(nfs_ftruncate(nfs, (struct nfsfh *)(uintptr_t)fi->fh, (uint64_t)size));
    return nfs_errno(nfs_truncate(nfs, path, (uint64_t)size));
}

static int op_unlink(const char *path) { return nfs_errno(nfs_unlink(nfs, path)); }
static int op_mkdir(const char *path, mode_t mode) { return nfs_errno(nfs_mkdir2(nfs, path, (int)mode)); }
static int op_rmdir(const char *path) { return nfs_errno(nfs_rmdir(nfs, path)); }
static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    return nfs_errno(nfs_chmod(nfs, path, (int)mode));
}
static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    return nfs_errno(nfs_chown(nfs, path, (int)uid, (int)gid));
}

static int op_rename(const char *from, const char *to, unsigned int flags)
{
    if (flags)
        return -EINVAL; /* NFS RENAME has no RENAME_NOREPLACE / RENAME_EXCHANGE */
    return nfs_errno(nfs_rename(nfs, from, to));
}

static int op_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    struct timeval times[2];
    struct timeval now;
    gettimeofday(&now, NULL);
    for (int i = 0; i < 2; i++) {
        if (tv[i].tv_nsec == UTIME_NOW || tv[i].tv_nsec == UTIME_OMIT) {
            times[i] = now;
        } else {
            times[i].tv_sec = tv[i].tv_sec;
            times[i].tv_usec = tv[i].tv_nsec / 1000;
        }
    }
    return nfs_errno(nfs_utimes(nfs, path, times));
}

static int op_statfs(const char *path, struct statvfs *sv)
{
    struct nfs_statvfs_64 n;
    int rc = nfs_statvfs64(nfs, path, &n);
    if (rc < 0)
        return rc;
    memset(sv, 0, sizeof(*sv));
    sv->f_bsize = n.f_bsize;
    sv->f_frsize = n.f_frsize;
    sv->f_blocks = n.f_blocks;
    sv->f_bfree = n.f_bfree;
    sv->f_bavail = n.f_bavail;
    sv->f_files = n.f_files;
    sv->f_ffree = n.f_ffree;
    sv->f_favail = n.f_favail;
    sv->f_namemax = n.f_namemax;
    return 0;
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    cfg->attr_timeout = opts.attr_timeout;
    cfg->entry_timeout = opts.entry_timeout;
    cfg->negative_timeout = 0;
    cfg->use_ino = 1;
    cfg->nullpath_ok = 0;
    /* the kernel hands FUSE requests of at most max_write: as large as one NFS WRITE may be */
    if (conn->max_write > opts.wsize)
        conn->max_write = opts.wsize;
    return NULL;
}

static const struct fuse_operations operations = {
    .init = op_init,
    .getattr = op_getattr,
    .readdir = op_readdir,
    .open = op_open,
    .create = op_create,
    .read = op_read,
    .write = op_write,
    .release = op_release,
    .fsync = op_fsync,
    .truncate = op_truncate,
    .unlink = op_unlink,
    .mkdir = op_mkdir,
    .rmdir = op_rmdir,
    .chmod = op_chmod,
    .chown = op_chown,
    .rename = op_rename,
    .utimens = op_utimens,
    .statfs = op_statfs,
};

/* ------------------------------------------------------------------ mounting */

int main(int argc, char **argv)
{
    const char *source = NULL, *dir = NULL;
    char *list = NULL;
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o")) {
            if (++i >= argc)
                fail(EXIT_USAGE, "-o needs a list of options");
            list = strdup(argv[i]);
        } else if (!strcmp(argv[i], "-v")) {
            verbose = 1;
        } else if (!strcmp(argv[i], "-s") || !strcmp(argv[i], "-f") || !strcmp(argv[i], "-n") ||
                   !strcmp(argv[i], "-r") || !strcmp(argv[i], "-w")) {
            if (!strcmp(argv[i], "-r"))
                opts.readonly = 1;
            if (!strcmp(argv[i], "-f"))
                fail(EXIT_USAGE, "-f (fake mount) is not supported");
        } else if (argv[i][0] == '-') {
            fail(EXIT_USAGE, "unknown argument %s (usage: mount.nfs SERVER:/EXPORT DIR [-o OPTIONS] [-v])", argv[i]);
        } else if (!source) {
            source = argv[i];
        } else if (!dir) {
            dir = argv[i];
        } else {
            fail(EXIT_USAGE, "unexpected argument %s (usage: mount.nfs SERVER:/EXPORT DIR [-o OPTIONS])", argv[i]);
        }
    }
    if (!source || !dir)
        fail(EXIT_USAGE, "usage: mount.nfs SERVER:/EXPORT DIR [-o OPTIONS]");
    const char *colon = strchr(source, ':');
    if (!colon || colon == source || colon[1] != '/')
        fail(EXIT_USAGE, "source %s: expected SERVER:/EXPORT", source);

    opts.version = 3;
    opts.rsize = opts.wsize = MAX_IO;
    opts.timeo_ds = 600; /* nfs(5): 60 s for TCP */
    opts.retrans = 2;
    opts.mountport = DEFAULT_MOUNT_PORT;
    if (strstr(argv[0], "mount.nfs4"))
        fail(EXIT_USAGE, "mount -t nfs4: this client speaks NFSv3 only (libnfs 4.0's NFSv4 is not functional); "
                         "use -t nfs with nfsvers=3");
    if (list)
        parse_options(list, &opts);

    char server[256], export_path[4096];
    snprintf(server, sizeof(server), "%.*s", (int)(colon - source), source);
    snprintf(export_path, sizeof(export_path), "%s", colon + 1);

    nfs = nfs_init_context();
    if (!nfs)
        fail(EXIT_FAILURE_MOUNT, "cannot create an NFS context");
    /* Ports and version go through libnfs's URL arguments, its one public way to set them */
    char url[4600];
    int n = snprintf(url, sizeof(url), "nfs://%s%s?version=%d", server, export_path, opts.version);
    n += snprintf(url + n, sizeof(url) - (size_t)n, "&nfsport=%d", opts.port > 0 ? opts.port : DEFAULT_NFS_PORT);
    if (opts.version == 3)
        n += snprintf(url + n, sizeof(url) - (size_t)n, "&mountport=%d", opts.mountport);
    snprintf(url + n, sizeof(url) - (size_t)n, "&autoreconnect=%d", opts.soft ? opts.retrans : -1);
    struct nfs_url *parsed = nfs_parse_url_dir(nfs, url);
    if (!parsed)
        fail(EXIT_FAILURE_MOUNT, "%s: %s", url, nfs_get_error(nfs));
    if (opts.soft) /* hard: no timeout, the call waits for the server as the kernel's hard mount does */
        nfs_set_timeout(nfs, opts.timeo_ds * 100 * (opts.retrans + 1));
    nfs_set_uid(nfs, (int)getuid());
    nfs_set_gid(nfs, (int)getgid());
    if (nfs_mount(nfs, parsed->server, parsed->path) != 0)
        fail(EXIT_FAILURE_MOUNT, "mounting %s failed: %s", source, nfs_get_error(nfs));
    uint64_t readmax = nfs_get_readmax(nfs), writemax = nfs_get_writemax(nfs);
    if (readmax && opts.rsize > readmax)
        opts.rsize = (uint32_t)readmax; /* the server's limit wins, as with the kernel client */
    if (writemax && opts.wsize > writemax)
        opts.wsize = (uint32_t)writemax;
    if (verbose)
        fprintf(stderr, "mount.nfs: %s mounted over NFSv%d, rsize=%u wsize=%u %s\n", source,
                opts.version, opts.rsize, opts.wsize, opts.soft ? "soft" : "hard");

    char fsname[4400];
    snprintf(fsname, sizeof(fsname), "fsname=%s,subtype=nfs,allow_other,default_permissions%s", source,
             opts.readonly ? ",ro" : "");
    char *fuse_argv[] = {argv[0], "-o", fsname, NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, fuse_argv);
    struct fuse *fuse = fuse_new(&args, &operations, sizeof(operations), NULL);
    if (!fuse)
        fail(EXIT_FAILURE_MOUNT, "cannot start the FUSE file system");
    if (fuse_mount(fuse, dir) != 0)
        fail(EXIT_FAILURE_MOUNT, "cannot mount on %s (is /dev/fuse there?)", dir);
    if (fuse_daemonize(0) != 0) /* the parent returns once the child runs: the mount is up */
        fail(EXIT_FAILURE_MOUNT, "cannot run in the background");
    int rc = fuse_loop(fuse); /* single-threaded: libnfs's synchronous context serves one call at a time */
    fuse_unmount(fuse);
    fuse_destroy(fuse);
    nfs_destroy_url(parsed);
    nfs_destroy_context(nfs);
    return rc ? 1 : 0;
}
