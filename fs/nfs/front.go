package nfs

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/fs/serve"
)

// The front reads the RPC records (RFC 5531 record marking) of one client
// connection, answers the procedures of procs.go itself and hands every
// other record to the library through a connection of its own (libConn),
// writing the library's replies back whole, so that its own replies never
// land inside one of them.

// Limits of a connection.
const (
	DefaultIdleTimeout    = 5 * time.Minute  // between requests (clients reconnect on their own)
	DefaultRequestTimeout = 30 * time.Second // the rest of a record once it has begun (slowloris)
	maxRecord             = maxRead + 64<<10 // largest request record accepted
	recordStep            = 16 << 10         // a record's buffer grows by at most this much a read
	frontBuffer           = 4 << 10          // read buffer of a connection
)

// RPC programs and procedures the front answers.
const (
	progMount = 100005
	progNFS   = 100003

	mountMnt     = 1
	mountDump    = 2
	mountUmntAll = 4
	mountExport  = 5

	nfsRead        = 6
	nfsReadDir     = 16
	nfsReadDirPlus = 17
	nfsFSInfo      = 19
)

// errTooLarge is the error of a request record beyond maxRecord.
var errTooLarge = errors.New("nfs: request record too large")

// front is one client connection.
type front struct {
	s        *Server
	c        net.Conn
	sc       *serve.Conn // c as the listener made it, nil if not one
	br       *bufio.Reader
	wmu      sync.Mutex // held while a whole reply record is written to c
	lib      *libConn
	inflight atomic.Int32
	once     sync.Once
}

func (s *Server) newFront(c net.Conn, ll *libListener) *front {
	f := &front{s: s, c: c, br: bufio.NewReaderSize(c, frontBuffer)}
	f.sc, _ = c.(*serve.Conn)
	f.lib = &libConn{f: f, in: make(chan []byte), closed: make(chan struct{}), pending: map[uint32]call{}}
	s.mu.Lock()
	s.open[f] = struct{}{}
	s.mu.Unlock()
	select {
	case ll.conns <- f.lib:
	case <-ll.done:
		f.close()
	}
	return f
}

// close ends the connection.
func (f *front) close() {
	f.once.Do(func() {
		f.c.Close()
		close(f.lib.closed)
		f.s.mu.Lock()
		delete(f.s.open, f)
		f.s.mu.Unlock()
	})
}

// busy marks the connection busy while a request is in progress.
func (f *front) busy(delta int32) {
	if f.sc != nil {
		f.sc.SetBusy(f.inflight.Add(delta) > 0)
	}
}

// serve reads and dispatches records until the connection ends.
func (f *front) serve(ctx context.Context) {
	defer f.close()
	for ctx.Err() == nil {
		rec, err := f.readRecord()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				f.s.o.Logger.WithError(err).WithField("remote", f.c.RemoteAddr().String()).Debug("nfs: connection dropped")
			}
			return
		}
		f.busy(1)
		c, err := parseCall(rec)
		if err != nil {
			f.busy(-1)
			return // not RPC: nothing sensible to answer
		}
		if f.answer(ctx, c) {
			f.busy(-1)
			continue
		}
		f.lib.expect(c)
		select {
		case f.lib.in <- rec:
		case <-f.lib.closed:
			return
		}
	}
}

// readRecord reads one RPC record, joining its fragments. The record's
// buffer grows with the bytes that arrived, not with the length its mark
// claims: a client that announces a large record and sends it slowly (or
// never) holds at most recordStep bytes more than it sent.
func (f *front) readRecord() ([]byte, error) {
	var rec []byte
	for first := true; ; first = false {
		if first {
			_ = f.c.SetReadDeadline(time.Now().Add(f.s.o.IdleTimeout))
		}
		var mark [4]byte
		if _, err := io.ReadFull(f.br, mark[:]); err != nil {
			return nil, err
		}
		if first {
			_ = f.c.SetReadDeadline(time.Now().Add(f.s.o.RequestTimeout))
		}
		m := binary.BigEndian.Uint32(mark[:])
		n := int(m &^ (1 << 31))
		if len(rec)+n > maxRecord {
			return nil, errTooLarge
		}
		for n > 0 {
			k := min(n, recordStep)
			start := len(rec)
			rec = slices.Grow(rec, k)[:start+k]
			if _, err := io.ReadFull(f.br, rec[start:]); err != nil {
				return nil, err
			}
			n -= k
		}
		if m&(1<<31) != 0 {
			return rec, nil
		}
	}
}

// reply writes one reply record: the RPC header of an accepted call with
// status acceptStat, then body.
func (f *front) reply(c call, acceptStat uint32, body []byte) {
	var w xdrWriter
	w.u32(0) // the record mark, set below
	w.u32(c.xid)
	w.u32(1) // REPLY
	w.u32(0) // MSG_ACCEPTED
	w.u32(0) // verifier: AUTH_NONE
	w.u32(0)
	w.u32(acceptStat)
	w.b = append(w.b, body...)
	binary.BigEndian.PutUint32(w.b, uint32(len(w.b)-4)|1<<31)
	f.wmu.Lock()
	_, err := f.c.Write(w.b)
	f.wmu.Unlock()
	if err != nil {
		f.close()
	}
}

// call is the header of an RPC call.
type call struct {
	xid, prog, vers, proc uint32
	args                  []byte
	start                 time.Time
}

// parseCall parses the RPC call header of a record.
func parseCall(rec []byte) (call, error) {
	r := xdrReader{b: rec}
	c := call{xid: r.u32(), start: time.Now()}
	if r.u32() != 0 || r.u32() != 2 { // CALL, RPC version 2
		return c, errGarbage
	}
	c.prog, c.vers, c.proc = r.u32(), r.u32(), r.u32()
	r.u32()
	r.opaque(400) // credentials
	r.u32()
	r.opaque(400) // verifier
	c.args = r.b
	return c, r.err
}

// log writes the debug line of a finished call.
func (f *front) log(c call, status string) {
	f.s.o.Logger.WithFields(logrus.Fields{
		"prog": c.prog, "proc": c.proc, "status": status, "duration": time.Since(c.start).String(),
		"remote": f.c.RemoteAddr().String(),
	}).Debug("nfs request")
}

// libConn is the library's side of a client connection: it reads the
// records the front hands it and writes its replies through to the
// client, one whole record at a time.
type libConn struct {
	f      *front
	in     chan []byte
	closed chan struct{}
	cur    []byte // the record being read, with its mark

	// writing: where the library is in its current reply record
	hdr       [4]byte
	hdrN      int
	remaining uint32
	last      bool
	locked    bool
	xid       [4]byte
	xidN      int

	pmu     sync.Mutex
	pending map[uint32]call // calls the library is answering, by xid
}

func (l *libConn) expect(c call) {
	l.pmu.Lock()
	l.pending[c.xid] = c
	l.pmu.Unlock()
}

// Read returns the bytes of the records handed over, record-marked.
func (l *libConn) Read(p []byte) (int, error) {
	if len(l.cur) == 0 {
		select {
		case rec := <-l.in:
			l.cur = binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(rec)), uint32(len(rec))|1<<31)
			l.cur = append(l.cur, rec...)
		case <-l.closed:
			return 0, io.EOF
		}
	}
	n := copy(p, l.cur)
	l.cur = l.cur[n:]
	return n, nil
}

// Write passes the library's reply bytes to the client, holding the
// front's write lock from the first byte of a record to its last.
func (l *libConn) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if l.remaining == 0 && l.hdrN < 4 {
			k := copy(l.hdr[l.hdrN:], p)
			l.hdrN += k
			p = p[k:]
			written += k
			if l.hdrN < 4 {
				continue
			}
			m := binary.BigEndian.Uint32(l.hdr[:])
			l.remaining, l.last = m&^(1<<31), m&(1<<31) != 0
			if !l.locked {
				l.f.wmu.Lock()
				l.locked = true
				l.xidN = 0
			}
			if err := l.out(l.hdr[:]); err != nil {
				return written, err
			}
			l.finishFragment()
			continue
		}
		k := min(uint32(len(p)), l.remaining)
		if l.xidN < 4 {
			l.xidN += copy(l.xid[l.xidN:], p[:k])
		}
		if err := l.out(p[:k]); err != nil {
			return written, err
		}
		l.remaining -= k
		p = p[k:]
		written += int(k)
		l.finishFragment()
	}
	return written, nil
}

// out writes to the client, releasing the lock on failure.
func (l *libConn) out(p []byte) error {
	if _, err := l.f.c.Write(p); err != nil {
		if l.locked {
			l.locked = false
			l.f.wmu.Unlock()
		}
		return err
	}
	return nil
}

// finishFragment ends the current fragment once its bytes are out, and
// the record with its last fragment.
func (l *libConn) finishFragment() {
	if l.remaining != 0 || l.hdrN < 4 {
		return
	}
	l.hdrN = 0
	if !l.last {
		return
	}
	l.locked = false
	l.f.wmu.Unlock()
	xid := binary.BigEndian.Uint32(l.xid[:])
	l.pmu.Lock()
	c, ok := l.pending[xid]
	delete(l.pending, xid)
	l.pmu.Unlock()
	if ok {
		l.f.log(c, "answered by go-nfs")
		l.f.busy(-1)
	}
}

func (l *libConn) Close() error {
	l.f.close()
	return nil
}

func (l *libConn) LocalAddr() net.Addr              { return l.f.c.LocalAddr() }
func (l *libConn) RemoteAddr() net.Addr             { return l.f.c.RemoteAddr() }
func (l *libConn) SetDeadline(time.Time) error      { return nil }
func (l *libConn) SetReadDeadline(time.Time) error  { return nil }
func (l *libConn) SetWriteDeadline(time.Time) error { return nil }
