package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	nfsc "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"
)

// Connection limits of `recfs serve` through the binary: a flood of idle
// connections and slowloris clients neither lock out a normal client nor
// grow the server's memory past its stated budget, and the server's own
// timeouts close every one of them.

// serveConnBudget is what the README promises an open connection costs
// the server at most, beyond the tree it serves.
const serveConnBudget = 128 << 10

// Sizes of the flood.
const (
	floodConns   = 10_000 // idle connections that never send a byte
	floodSlow    = 200    // slowloris connections opened after them
	floodMax     = 256    // --max-conns of the server
	floodTimeout = time.Second
)

// raiseNoFile raises this process's soft limit of open files to its hard
// limit and returns how many connections the test may open.
func raiseNoFile(t *testing.T) int {
	t.Helper()
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	if r.Cur < r.Max {
		r.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
			t.Fatal(err)
		}
	}
	return int(r.Cur) - 512 // room for the test's own files and clients
}

// TestServeConnectionFlood: 10,000 idle connections then 200 slowloris
// clients (HTTP: a header that never ends; NFS: a record announced as
// 1 MiB and sent a byte at a time) against `recfs serve http`, `webdav`
// and `nfs`. A normal client still reads a record within its deadline,
// the server's peak RSS stays within --max-conns × 128 KiB of what it held
// before, and the server closes every one of those connections by itself
// (eviction beyond --max-conns, then --idle-timeout and
// --request-timeout).
func TestServeConnectionFlood(t *testing.T) {
	needBinary(t)
	limit := raiseNoFile(t)
	n := min(floodConns, limit-floodSlow)
	if n < 4*floodMax {
		t.Skipf("open-file limit %d too low for a flood of idle connections", limit+512)
	}
	t.Logf("flooding with %d idle connections (open-file limit %d)", n, limit+512)
	dir, _, recs := serveFixture(t, 40)
	for _, proto := range []string{"http", "webdav", "nfs"} {
		t.Run(proto, func(t *testing.T) { floodServe(t, proto, dir, recs, n) })
	}
}

// floodServe floods one protocol's server.
func floodServe(t *testing.T, proto, dir string, recs [][]byte, n int) {
	s := startServe(t, proto, "--max-conns", strconv.Itoa(floodMax),
		"--idle-timeout", floodTimeout.String(), "--request-timeout", floodTimeout.String(), dir)
	pid := s.cmd.Process.Pid
	base, err := procStatusKB(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	var closed atomic.Int64
	var wg sync.WaitGroup
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	}()
	// watch counts c as closed by the server once a read ends in EOF or
	// a reset (the test never closes a connection before the end).
	watch := func(c net.Conn) {
		conns = append(conns, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = io.Copy(io.Discard, c)
			closed.Add(1)
		}()
	}
	start := time.Now()
	for i := range n {
		c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		watch(c)
	}
	t.Logf("%s: %d idle connections in %v", proto, n, time.Since(start).Round(time.Millisecond))
	stopSlow := make(chan struct{})
	defer close(stopSlow)
	for i := range floodSlow {
		c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
		if err != nil {
			t.Fatalf("dial slowloris %d: %v", i, err)
		}
		watch(c)
		go slowloris(c, proto, stopSlow)
	}
	// A normal client, amid the flood and the slow clients.
	rec := 7
	got, err := fetchRecord(s, proto, fmt.Sprintf("events.log/%06d", rec), 10*time.Second)
	if err != nil || !bytes.Equal(got, recs[rec]) {
		t.Fatalf("%s: a normal client during the flood: %v, %d bytes, want %d", proto, err, len(got), len(recs[rec]))
	}
	// Every flood and slowloris connection is closed by the server.
	total := int64(n + floodSlow)
	deadline := time.Now().Add(20 * floodTimeout)
	for closed.Load() < total && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if c := closed.Load(); c < total {
		t.Fatalf("%s: %d of %d idle and slow connections still open %v after the flood (no timeout closed them)", proto, total-c, total, 20*floodTimeout)
	}
	t.Logf("%s: the server closed all %d connections %v after the flood began", proto, total, time.Since(start).Round(time.Millisecond))
	peak, err := procStatusKB(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	budget := int64(floodMax * serveConnBudget >> 10)
	t.Logf("%s: server VmRSS %d KiB before, VmHWM %d KiB after (+%d KiB; budget %d KiB)", proto, base, peak, peak-base, budget)
	if peak-base > budget {
		t.Fatalf("%s: the flood grew the server by %d KiB, beyond --max-conns %d × %d KiB = %d KiB", proto, peak-base, floodMax, serveConnBudget>>10, budget)
	}
	// And it still serves afterwards.
	if got, err := fetchRecord(s, proto, fmt.Sprintf("events.log/%06d", rec), 10*time.Second); err != nil || !bytes.Equal(got, recs[rec]) {
		t.Fatalf("%s: a client after the flood: %v", proto, err)
	}
}

// slowloris begins a request on c and sends the rest a byte at a time,
// never finishing it, until stop.
func slowloris(c net.Conn, proto string, stop <-chan struct{}) {
	if proto == "nfs" {
		var mark [8]byte
		binary.BigEndian.PutUint32(mark[:], 1<<31|1<<20) // one fragment of 1 MiB
		_, _ = c.Write(mark[:])
	} else {
		_, _ = fmt.Fprint(c, "GET /events.log/000001 HTTP/1.1\r\nHost: recfs\r\nX-Slow: ")
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
		}
	}
}

// fetchRecord reads the file at rel (slash-separated, below the root) from
// the server as a normal client would, within d.
func fetchRecord(s *served, proto, rel string, d time.Duration) ([]byte, error) {
	if proto != "nfs" {
		c := &http.Client{Timeout: d}
		resp, err := c.Get(s.url + rel)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", rel, resp.Status)
		}
		return io.ReadAll(resp.Body)
	}
	type res struct {
		b   []byte
		err error
	}
	done := make(chan res, 1)
	var mu sync.Mutex
	var client *rpc.Client
	go func() {
		b, err := func() ([]byte, error) {
			_, port, _ := net.SplitHostPort(s.addr)
			p, _ := strconv.Atoi(port)
			c, err := nfsc.DialServiceAtPort("127.0.0.1", p)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			client = c
			mu.Unlock()
			defer c.Close()
			tg, err := (&nfsc.Mount{Client: c}).Mount("/", rpc.NewAuthUnix("recfs-e2e", 0, 0).Auth())
			if err != nil {
				return nil, err
			}
			defer tg.Close()
			f, err := tg.Open("/" + rel)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return io.ReadAll(f)
		}()
		done <- res{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-time.After(d):
		mu.Lock()
		if client != nil {
			client.Close()
		}
		mu.Unlock()
		return nil, fmt.Errorf("no answer within %v", d)
	}
}
