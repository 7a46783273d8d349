// Package nfs serves an fs.Tree over NFSv3 (RFC 1813), read-only, so that
// `mount -t nfs -o port=P,mountport=P,nfsvers=3,tcp,nolock 127.0.0.1:/ MNT`
// works on Linux and macOS without FUSE, and userspace clients (libnfs's
// nfs-ls and nfs-cat, Go clients) read the tree.
//
// It builds on github.com/willscott/go-nfs, which answers the MOUNT
// protocol and most NFS procedures over a billy.Filesystem view of the
// tree and refuses every change with NFS3ERR_ROFS. A front in this
// package reads each RPC record first and answers itself what that
// library lacks or does in a way a large tree cannot afford:
//
//   - MOUNT EXPORT, DUMP and UMNTALL: the library has no handler, and
//     libnfs asks for the export list before it mounts.
//   - READDIR and READDIRPLUS: the library lists a whole directory into
//     memory for every call and scans it from the start to find the
//     cookie; here a cookie is a position in the tree's directory stream,
//     so a directory of a million records is listed in constant memory
//     and each call starts where the last stopped.
//   - READ and FSINFO: the library allocates what the client asks for (up
//     to 16 MiB a call) and advertises 1 GiB transfers; here reads are at
//     most 1 MiB, within a budget shared by all connections.
//
// File handles are derived from the entry's identity (see handle.go): no
// table grows with the handles given out. Attributes carry the change
// stamps of a followed tree (fs/serve.Stamps): a record directory that
// gained records gets a new mtime and ctime, which is what NFS clients
// look at to drop their cached listing, and the handles of a rewritten
// source go stale. NFS has no way to tell a client that something changed:
// mount with a short attribute cache (actimeo=1) to see appends soon.
//
// NFSv3 has no passwords (AUTH_UNIX only): the command refuses to serve
// beyond the loopback interface without --insecure-allow-anyone.
package nfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	gonfs "github.com/willscott/go-nfs"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/serve"
)

// Defaults of a Server.
const (
	maxRead           = 1 << 20  // largest READ reply, and what FSINFO advertises
	maxDirReply       = 1 << 20  // largest READDIR(PLUS) reply
	DefaultReadBudget = 64 << 20 // bytes of READ replies in flight across connections
)

// Options configure a [Server].
type Options struct {
	// Stamps are the change stamps of a followed tree (nil: not followed).
	Stamps *serve.Stamps
	// ReadBudget bounds the bytes all READ replies in progress hold
	// together (0: DefaultReadBudget).
	ReadBudget int64
	// IdleTimeout closes a connection that sends no request for this
	// long (0: DefaultIdleTimeout); RequestTimeout one whose request,
	// once begun, does not arrive whole within it (slowloris; 0:
	// DefaultRequestTimeout).
	IdleTimeout, RequestTimeout time.Duration
	// Logger gets one debug line per request with its duration, and the
	// library's messages at debug level (nil: logrus's standard logger).
	Logger logrus.FieldLogger
}

// Server serves one tree over NFSv3.
type Server struct {
	t      *fs.Tree
	r      *serve.Resolver
	o      Options
	paths  *pathTable
	fsys   *billyFS
	budget chan struct{} // one token per maxRead bytes of reads in progress

	mu   sync.Mutex
	open map[*front]struct{}
}

// New returns the NFS server of t. It keeps the names it looked up (see
// fs/serve.Resolver) until Close.
func New(t *fs.Tree, o Options) *Server {
	if o.Logger == nil {
		o.Logger = logrus.StandardLogger()
	}
	if o.ReadBudget <= 0 {
		o.ReadBudget = DefaultReadBudget
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	s := &Server{t: t, r: serve.NewResolver(t, 0, 0), o: o, paths: newPathTable(), open: map[*front]struct{}{}}
	s.budget = make(chan struct{}, max(1, o.ReadBudget/maxRead))
	s.fsys = &billyFS{s: s}
	return s
}

// libraryLog makes go-nfs log through logrus at debug level, once.
var libraryLog sync.Once

// Serve serves l until ctx ends or l fails; it closes l. Connections
// still open when ctx ends are closed.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	libraryLog.Do(func() { gonfs.SetLogger(debugLogger{s.o.Logger}) })
	lib := &libListener{conns: make(chan net.Conn), done: make(chan struct{}), addr: l.Addr()}
	libSrv := &gonfs.Server{Handler: s, Context: ctx}
	libDone := make(chan error, 1)
	go func() { libDone <- libSrv.Serve(lib) }()
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	var err error
	for {
		c, aerr := l.Accept()
		if aerr != nil {
			if ctx.Err() == nil {
				err = aerr
			}
			break
		}
		f := s.newFront(c, lib)
		go f.serve(ctx)
	}
	l.Close()
	lib.Close()
	<-libDone
	s.mu.Lock()
	open := make([]*front, 0, len(s.open))
	for f := range s.open {
		open = append(open, f)
	}
	s.mu.Unlock()
	for _, f := range open {
		f.close()
	}
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Close drops what the server keeps of the tree (call it after Serve
// returned and before closing the tree).
func (s *Server) Close() { s.r.Close() }

// libListener hands the library the connections the front made for it.
type libListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	addr  net.Addr
}

func (l *libListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *libListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *libListener) Addr() net.Addr { return l.addr }

// debugLogger sends the library's messages to a logrus logger at debug
// level: what it calls errors are a client's disconnects and our refusals.
type debugLogger struct{ l logrus.FieldLogger }

func (d debugLogger) SetLevel(gonfs.LogLevel)                   {}
func (d debugLogger) GetLevel() gonfs.LogLevel                  { return gonfs.DebugLevel }
func (d debugLogger) ParseLevel(string) (gonfs.LogLevel, error) { return gonfs.DebugLevel, nil }
func (d debugLogger) Panic(a ...any)                            { d.l.Debug(a...) }
func (d debugLogger) Fatal(a ...any)                            { d.l.Debug(a...) }
func (d debugLogger) Error(a ...any)                            { d.l.Debug(a...) }
func (d debugLogger) Warn(a ...any)                             { d.l.Debug(a...) }
func (d debugLogger) Info(a ...any)                             { d.l.Debug(a...) }
func (d debugLogger) Debug(a ...any)                            { d.l.Debug(a...) }
func (d debugLogger) Trace(a ...any)                            {}
func (d debugLogger) Print(a ...any)                            { d.l.Debug(a...) }
func (d debugLogger) Panicf(f string, a ...any)                 { d.l.Debugf(f, a...) }
func (d debugLogger) Fatalf(f string, a ...any)                 { d.l.Debugf(f, a...) }
func (d debugLogger) Errorf(f string, a ...any)                 { d.l.Debugf(f, a...) }
func (d debugLogger) Warnf(f string, a ...any)                  { d.l.Debugf(f, a...) }
func (d debugLogger) Infof(f string, a ...any)                  { d.l.Debugf(f, a...) }
func (d debugLogger) Debugf(f string, a ...any)                 { d.l.Debugf(f, a...) }
func (d debugLogger) Tracef(string, ...any)                     {}
func (d debugLogger) Printf(f string, a ...any)                 { d.l.Debugf(f, a...) }

var _ gonfs.Logger = debugLogger{}

// describe names a handle for logs.
func (h handle) String() string { return fmt.Sprintf("%s#%d(kind %d)", h.path, h.n, h.kind) }
