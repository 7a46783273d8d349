package serve

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
)

// Defaults of the connection limits.
const (
	DefaultMaxConns  = 1024             // connections open at once
	DefaultWriteIdle = 60 * time.Second // longest a write waits for a client that does not read
)

// Listener is a TCP listener whose connections are bounded: past MaxConns,
// a new connection evicts the connection that has been idle longest (no
// request in progress: one that never sent a request, or a keep-alive
// connection between requests), and is itself refused when every
// connection is busy. Idle connections therefore never lock clients out,
// and a flood of them costs a bounded amount of memory.
//
// Writes to a client that stops reading fail after WriteIdle (a slow-read
// client cannot hold a connection forever). Protocols mark a connection
// busy while they serve a request (see [Conn.SetBusy]; [HTTPServer] does
// it from net/http's connection states).
type Listener struct {
	net.Listener
	max       int
	writeIdle time.Duration
	log       logrus.FieldLogger

	mu    sync.Mutex
	conns map[*Conn]struct{}

	evicted, refused atomic.Int64
}

// Limits bound a [Listener].
type Limits struct {
	MaxConns  int           // 0: DefaultMaxConns
	WriteIdle time.Duration // 0: DefaultWriteIdle
}

// Listen listens on the TCP address addr with the limits l. log, if not
// nil, receives a debug line per evicted or refused connection.
func Listen(addr string, l Limits, log logrus.FieldLogger) (*Listener, error) {
	inner, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return NewListener(inner, l, log), nil
}

// NewListener bounds the connections of inner with the limits l.
func NewListener(inner net.Listener, l Limits, log logrus.FieldLogger) *Listener {
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.WriteIdle <= 0 {
		l.WriteIdle = DefaultWriteIdle
	}
	if log == nil {
		log = logrus.StandardLogger()
	}
	return &Listener{Listener: inner, max: l.MaxConns, writeIdle: l.WriteIdle, log: log, conns: map[*Conn]struct{}{}}
}

// Accept waits for the next connection, making room for it within the
// limit.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &Conn{Conn: nc, l: l}
		c.idleSince.Store(time.Now().UnixNano())
		l.mu.Lock()
		if len(l.conns) >= l.max {
			victim := l.oldestIdle()
			if victim == nil {
				l.mu.Unlock()
				nc.Close()
				l.refused.Add(1)
				l.log.WithField("remote", nc.RemoteAddr().String()).Debug("connection refused: every connection is busy")
				continue
			}
			delete(l.conns, victim)
			l.mu.Unlock()
			victim.Conn.Close()
			l.evicted.Add(1)
			l.log.WithField("remote", victim.RemoteAddr().String()).Debug("idle connection closed to make room")
			l.mu.Lock()
		}
		l.conns[c] = struct{}{}
		l.mu.Unlock()
		return c, nil
	}
}

// oldestIdle returns the connection idle the longest, or nil; l.mu held.
func (l *Listener) oldestIdle() *Conn {
	var best *Conn
	var since int64
	for c := range l.conns {
		if c.busy.Load() {
			continue
		}
		if s := c.idleSince.Load(); best == nil || s < since {
			best, since = c, s
		}
	}
	return best
}

// Open returns the number of connections open now.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Shed returns how many connections were evicted to make room and how
// many were refused because every connection was busy.
func (l *Listener) Shed() (evicted, refused int64) { return l.evicted.Load(), l.refused.Load() }

// CloseAll closes every open connection (after Close, to end a server
// that must not wait for its clients).
func (l *Listener) CloseAll() {
	l.mu.Lock()
	conns := l.conns
	l.conns = map[*Conn]struct{}{}
	l.mu.Unlock()
	for c := range conns {
		c.Conn.Close()
	}
}

// Conn is a connection of a [Listener].
type Conn struct {
	net.Conn
	l         *Listener
	busy      atomic.Bool
	idleSince atomic.Int64 // unix nanoseconds
	once      sync.Once
}

// SetBusy marks the connection as serving a request (true) or waiting for
// one (false); only idle connections are evicted.
func (c *Conn) SetBusy(busy bool) {
	if !busy {
		c.idleSince.Store(time.Now().UnixNano())
	}
	c.busy.Store(busy)
}

// Write writes to the connection within the listener's WriteIdle.
func (c *Conn) Write(p []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.l.writeIdle))
	return c.Conn.Write(p)
}

// Close closes the connection and frees its place.
func (c *Conn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// connOf returns the *Conn under nc (a *Conn or a TLS connection over
// one), or nil.
func connOf(nc net.Conn) *Conn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, _ := nc.(*Conn)
	return c
}
