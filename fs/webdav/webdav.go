// Package webdav serves an fs.Tree over WebDAV (RFC 4918, class 1,
// read-only), so that Finder, Windows Explorer, davfs2, rclone and cadaver
// can mount or copy it where FUSE is not available.
//
// It builds on golang.org/x/net/webdav: [FileSystem] adapts the tree to
// its webdav.FileSystem, and its Handler answers GET, HEAD (Range,
// conditional requests) and PROPFIND of depth 0. This package answers the
// rest itself:
//
//   - PROPFIND of depth 1 is streamed from the tree's directory stream, one
//     response element per entry: x/net/webdav reads a whole directory
//     into memory first (File.Readdir(0)), which a directory of a million
//     records must not cost. Depth infinity is refused (403 with
//     propfind-finite-depth, as RFC 4918 allows).
//   - OPTIONS says "DAV: 1": no locks, since nothing can be written.
//   - Every method that would change the tree (PUT, DELETE, MKCOL, COPY,
//     MOVE, PROPPATCH, LOCK, UNLOCK, POST) answers 403 with the reason.
//
// Names resolve one at a time from the tree's root with its Lookup (see
// fs/serve.Split): "..", ".", NUL and backslashes in a path are refused
// before any lookup, and the tree itself never follows a symbolic link.
// ETags and Last-Modified come from the entry's identity (inode number,
// size, time) and, on a followed tree, from the change stamps of its
// record directory (fs/serve.Stamps), so that clients revalidate what
// changed.
package webdav

import (
	"net/http"
	"strings"

	"github.com/sirupsen/logrus"
	xwebdav "golang.org/x/net/webdav"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/serve"
)

// Options configure a [Handler].
type Options struct {
	// Stamps are the change stamps of a followed tree (nil: not followed).
	Stamps *serve.Stamps
	// Logger receives the handler's errors (nil: logrus's standard
	// logger). Tree errors are logged once by the tree.
	Logger logrus.FieldLogger
}

// Handler serves one tree over WebDAV.
type Handler struct {
	t   *fs.Tree
	o   Options
	fsy *FileSystem
	dav *xwebdav.Handler
}

// New returns the WebDAV handler of t, rooted at the URL path "/". It
// keeps the names it looked up (see fs/serve.Resolver) until Close.
func New(t *fs.Tree, o Options) *Handler {
	if o.Logger == nil {
		o.Logger = logrus.StandardLogger()
	}
	fsy := &FileSystem{t: t, r: serve.NewResolver(t, 0, 0), stamps: o.Stamps}
	h := &Handler{t: t, o: o, fsy: fsy}
	h.dav = &xwebdav.Handler{
		FileSystem: fsy,
		LockSystem: xwebdav.NewMemLS(), // required by the handler; LOCK never reaches it
		Logger: func(r *http.Request, err error) {
			if err != nil {
				o.Logger.WithError(err).WithField("path", r.URL.Path).Debug("webdav")
			}
		},
	}
	return h
}

// Close drops what the handler keeps of the tree (call it before closing
// the tree).
func (h *Handler) Close() { h.fsy.r.Close() }

// allowed are the methods a read-only WebDAV server answers.
var allowed = []string{http.MethodOptions, http.MethodGet, http.MethodHead, "PROPFIND"}

// ServeHTTP answers one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	serve.ReadOnly(http.HandlerFunc(h.serve), allowed...).ServeHTTP(w, r)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodOptions:
		h.options(w, r)
		return
	case "PROPFIND":
		depth := strings.TrimSpace(r.Header.Get("Depth"))
		switch depth {
		case "0":
		case "1":
			h.propfind(w, r)
			return
		default:
			w.Header().Set("Content-Type", "text/xml; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` +
				`<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>`))
			return
		}
	}
	// GET, HEAD and PROPFIND of depth 0 go to x/net/webdav once the entry
	// is known to be readable: its handler would answer 404 for any error.
	if _, err := h.fsy.lookup(r.Context(), r.URL.Path); err != nil {
		status := serve.HTTPStatus(h.t, err)
		http.Error(w, http.StatusText(status), status)
		return
	}
	h.dav.ServeHTTP(w, r)
}

// options answers OPTIONS: class 1 only (no locks), and the read methods.
func (h *Handler) options(w http.ResponseWriter, r *http.Request) {
	allow := "OPTIONS, PROPFIND"
	if e, err := h.fsy.lookup(r.Context(), r.URL.Path); err == nil && !e.n.IsDir() {
		allow = "OPTIONS, GET, HEAD, PROPFIND"
	}
	w.Header().Set("Allow", allow)
	w.Header().Set("DAV", "1")
	w.Header().Set("MS-Author-Via", "DAV")
	w.WriteHeader(http.StatusOK)
}
