/*
 * Preloaded into the local File Gateway's nfs-ganesha: its RPC programs are not registered with a
 * portmapper. ganesha registers NFS and MOUNT with rpcbind on port 111 and stops when it cannot;
 * port 111 is this machine's, shared by every session, so the stand-in runs without one and its
 * clients are told the ports instead (mount.nfs stand-in: NFS on port=, 2049, MOUNT on mountport=,
 * 20048). Only the registration is skipped: ganesha's own dispatcher serves every call.
 */
#include <stdbool.h>

bool svc_reg(void *xprt, unsigned long program, unsigned long version, void *dispatch, const void *netconfig)
{
    (void)xprt, (void)program, (void)version, (void)dispatch, (void)netconfig;
    return true;
}

void svc_unreg(unsigned long program, unsigned long version) { (void)program, (void)version; }
