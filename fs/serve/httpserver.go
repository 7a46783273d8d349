package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// Defaults of HTTP servers.
const (
	DefaultReadHeaderTimeout = 10 * time.Second // a request's line and headers (slowloris)
	DefaultReadTimeout       = 30 * time.Second // a whole request, body included
	DefaultIdleTimeout       = 60 * time.Second // a keep-alive connection between requests
	DefaultShutdownTimeout   = 5 * time.Second  // requests in progress at shutdown
	maxHeaderBytes           = 64 << 10
)

// HTTPOptions configure [ServeHTTP].
type HTTPOptions struct {
	// Credentials, if not nil, are required of every request (HTTP
	// basic authentication); Realm names them to the client ("recfs").
	Credentials *Credentials
	Realm       string
	// TLS, if not nil, serves HTTPS (see [LoadTLS]).
	TLS *tls.Config
	// Timeouts (0: the defaults above).
	ReadHeaderTimeout, ReadTimeout, IdleTimeout, ShutdownTimeout time.Duration
	// Logger gets one debug line per request with its duration, and the
	// server's errors. nil: logrus's standard logger.
	Logger logrus.FieldLogger
}

// LoadTLS returns the TLS configuration of a certificate and key in PEM
// files.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serve: TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// ServeHTTP serves h on l until ctx ends, then shuts down: requests in
// progress get ShutdownTimeout to finish, after which every connection is
// closed. Each request is checked against o.Credentials and logged at
// debug level. It returns nil after a shutdown asked for by ctx.
func ServeHTTP(ctx context.Context, l *Listener, h http.Handler, o HTTPOptions) error {
	lg := o.Logger
	if lg == nil {
		lg = logrus.StandardLogger()
	}
	srv := &http.Server{
		Handler:           logRequests(lg, authenticate(o.Credentials, o.Realm, h)),
		ReadHeaderTimeout: or(o.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       or(o.ReadTimeout, DefaultReadTimeout),
		IdleTimeout:       or(o.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          nil,
		ConnState: func(nc net.Conn, st http.ConnState) {
			if c := connOf(nc); c != nil {
				c.SetBusy(st == http.StateActive)
			}
		},
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	var ln net.Listener = l
	if o.TLS != nil {
		ln = tls.NewListener(l, o.TLS)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		l.CloseAll()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), or(o.ShutdownTimeout, DefaultShutdownTimeout))
	defer cancel()
	err := srv.Shutdown(sctx)
	l.CloseAll()
	<-done
	if errors.Is(err, context.DeadlineExceeded) {
		lg.Warn("requests still running at shutdown were cut off")
		err = nil
	}
	return err
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// authenticate requires c's credentials of every request.
func authenticate(c *Credentials, realm string, h http.Handler) http.Handler {
	if c == nil {
		return h
	}
	if realm == "" {
		realm = "recfs"
	}
	challenge := fmt.Sprintf("Basic realm=%q, charset=\"UTF-8\"", realm)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || !c.Check(user, pass) {
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "401 unauthorized: this server needs a user name and password", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// logRequests logs every request at debug level: method, path, status,
// bytes, duration and client.
func logRequests(lg logrus.FieldLogger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		lg.WithFields(logrus.Fields{
			"method": r.Method, "path": r.URL.Path, "status": rec.status, "bytes": rec.n,
			"duration": time.Since(start).String(), "remote": r.RemoteAddr,
		}).Debug("request")
	})
}

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush flushes the underlying writer.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// writeMethods are the methods that would change what a server serves.
var writeMethods = map[string]bool{
	http.MethodPut: true, http.MethodPost: true, http.MethodDelete: true, http.MethodPatch: true,
	"MKCOL": true, "COPY": true, "MOVE": true, "PROPPATCH": true, "LOCK": true, "UNLOCK": true,
}

// ReadOnly answers every method not in allowed itself: 403 Forbidden with
// the reason for a method that would change the tree (PUT, DELETE, MKCOL,
// PROPPATCH, LOCK...), 405 Method Not Allowed with an Allow header for any
// other.
func ReadOnly(h http.Handler, allowed ...string) http.Handler {
	ok := map[string]bool{}
	for _, m := range allowed {
		ok[m] = true
	}
	allow := strings.Join(allowed, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok[r.Method] {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Allow", allow)
		if writeMethods[r.Method] {
			http.Error(w, fmt.Sprintf("403 forbidden: recfs serves its records read-only; %s would change them", r.Method), http.StatusForbidden)
			return
		}
		http.Error(w, fmt.Sprintf("405 method not allowed: %s (allowed: %s)", r.Method, allow), http.StatusMethodNotAllowed)
	})
}
