// Package serve holds what the network adapters of recfs share (fs/webdav,
// fs/httpserve and fs/nfs, which serve an fs.Tree to clients that have no
// FUSE): the exposure rule, credentials, listeners with bounded
// connections, HTTP servers with slowloris-safe timeouts and a request
// log, the refusal of every change, and the change stamps that keep
// cached attributes truthful while a tree follows its sources.
//
// It knows nothing of a protocol's wire format. A command makes one
// [Options] from its flags, checks it with [Options.Check] (a listener
// that is not on the loopback interface needs credentials or an explicit
// [Options.InsecureAllowAnyone]), and hands a [Listener] from [Listen] to
// the adapter, which serves it until its context ends.
//
// Concurrency: every exported type is safe for concurrent use.
package serve
