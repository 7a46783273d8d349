// Package serving opens a tree as fs/open does and serves it over
// WebDAV, HTTP or NFS: the assembly of `recfs serve`, kept out of fs/open so
// that what opens tables (cat, mount, the Beam IO) does not link the network
// servers.
package serving

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/httpserve"
	"github.com/recfs/recfs/fs/nfs"
	"github.com/recfs/recfs/fs/open"
	netserve "github.com/recfs/recfs/fs/serve"
	"github.com/recfs/recfs/fs/webdav"
)

// Options are the options of [Start]: the tree to serve and how.
type Options struct {
	Tree     open.TreeOptions
	Protocol string // "webdav", "http" or "nfs"
	Addr     string // host:port to listen on
	MaxConns int    // connections served at once (0: the listener's default)
	// Credentials and TLS apply to the HTTP protocols (nil: none).
	Credentials *netserve.Credentials
	TLS         *tls.Config
	// Follow, every FollowInterval, publishes changes of the sources to
	// clients (ETags, NFS attributes).
	Follow         bool
	FollowInterval time.Duration
	IdleTimeout    time.Duration // an idle connection is closed after it
	RequestTimeout time.Duration // reading a request's header (NFS: a whole request) may take this long
	Logger         logrus.FieldLogger
}

// Server is a tree served over one protocol on its listener; Start opens
// it.
type Server struct {
	tree   *fs.Tree
	l      *netserve.Listener
	p      protocolServer
	stop   func() // ends following; nil when not following
	closed bool
}

// protocolServer serves a tree over one protocol on its listener.
type protocolServer interface {
	serve(ctx context.Context) error
	Close()
}

// Start opens the tree of target as open.Tree does and listens at o.Addr for
// clients of o.Protocol. Run serves them; Close releases everything.
func Start(ctx context.Context, target string, o Options) (*Server, error) {
	tree, err := open.Tree(ctx, target, o.Tree)
	if err != nil {
		return nil, err
	}
	s := &Server{tree: tree}
	var stamps *netserve.Stamps
	if o.Follow {
		stamps, s.stop = netserve.Follow(tree, o.FollowInterval, nil)
	}
	if s.l, err = netserve.Listen(o.Addr, netserve.Limits{MaxConns: o.MaxConns}, o.Logger); err != nil {
		s.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	if s.p, err = newProtocolServer(o, tree, stamps, s.l); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Addr is the address the server listens at.
func (s *Server) Addr() string { return s.l.Addr().String() }

// URL is where clients find the server of protocol over TLS or not.
func (s *Server) URL(protocol string, https bool) string { return serveURL(protocol, s.Addr(), https) }

// Run serves clients until ctx ends.
func (s *Server) Run(ctx context.Context) error { return s.p.serve(ctx) }

// Close stops the protocol server, the listener, following and the tree.
func (s *Server) Close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.p != nil {
		s.p.Close()
	}
	if s.l != nil {
		s.l.Close()
	}
	if s.stop != nil {
		s.stop()
	}
	s.tree.Close()
}

// nfsServer is the NFS server on its listener.
type nfsServer struct {
	*nfs.Server
	l *netserve.Listener
}

func (s nfsServer) serve(ctx context.Context) error { return s.Serve(ctx, s.l) }

// closingHandler is an HTTP handler holding resources until Close.
type closingHandler interface {
	http.Handler
	Close()
}

// httpServer serves a WebDAV or browsing handler on its listener.
type httpServer struct {
	h closingHandler
	l *netserve.Listener
	o netserve.HTTPOptions
}

func (s httpServer) serve(ctx context.Context) error { return netserve.ServeHTTP(ctx, s.l, s.h, s.o) }
func (s httpServer) Close()                          { s.h.Close() }

// newProtocolServer makes the server of o.Protocol for tree on l.
func newProtocolServer(o Options, tree *fs.Tree, stamps *netserve.Stamps, l *netserve.Listener) (protocolServer, error) {
	lg := o.Logger
	if o.Protocol == "nfs" {
		return nfsServer{nfs.New(tree, nfs.Options{Stamps: stamps, Logger: lg, IdleTimeout: o.IdleTimeout, RequestTimeout: o.RequestTimeout}), l}, nil
	}
	ho := netserve.HTTPOptions{Credentials: o.Credentials, Realm: "recfs", TLS: o.TLS, Logger: lg,
		ReadHeaderTimeout: o.RequestTimeout, IdleTimeout: o.IdleTimeout}
	if o.Protocol == "webdav" {
		return httpServer{webdav.New(tree, webdav.Options{Stamps: stamps, Logger: lg}), l, ho}, nil
	}
	bo := httpserve.Options{Stamps: stamps, Logger: lg, Env: browseEnv}
	if o.Tree.Decode == nil {
		// Raw files; the browse page shows records as --decode auto would.
		var err error
		if bo.Decoders, err = decoders.Prepare(decoders.Spec{Mode: decoders.ModeAuto, Params: decode.Params{Open: open.OpenFile}}); err != nil {
			return nil, err
		}
	}
	return httpServer{httpserve.New(tree, bo), l, ho}, nil
}

// serveURL is where clients find the server of protocol listening at addr.
func serveURL(protocol, addr string, https bool) string {
	host, port, _ := net.SplitHostPort(addr)
	if protocol == "nfs" {
		return fmt.Sprintf("nfs://%s//?version=3&nfsport=%s&mountport=%s", hostInURL(host), port, port)
	}
	scheme := "http"
	if https {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s/", scheme, net.JoinHostPort(host, port))
}

// hostInURL brackets an IPv6 host.
func hostInURL(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return "[" + host + "]"
	}
	return host
}

// browseEnv describes the record file at path (format as .recfs names it)
// to the decoder of the browse page, as a mount's view does.
func browseEnv(path, format string) decode.Env {
	env := decode.Env{Path: path}
	if f, err := codec.ParseFormat(format); err == nil {
		env.Format = f
	}
	return open.DecodeEnv(path, env.Format)
}
