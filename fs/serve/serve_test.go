package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest"
)

func TestCheckExposure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		addr    string
		guarded bool
		ok      bool
	}{
		{"127.0.0.1:0", false, true}, {"[::1]:8080", false, true}, {"localhost:80", false, true}, {"127.3.4.5:1", false, true},
		{":8080", false, false}, {"0.0.0.0:8080", false, false}, {"[::]:1", false, false}, {"192.0.2.7:80", false, false},
		{":8080", true, true}, {"0.0.0.0:1", true, true},
	} {
		err := CheckExposure(ctx, c.addr, c.guarded)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrExposed) {
			t.Errorf("CheckExposure(%q, %v) = %v", c.addr, c.guarded, err)
		}
	}
	if err := CheckExposure(ctx, "no-port", false); err == nil {
		t.Error("an address without a port passed")
	}
}

// start serves h on a fresh loopback listener until the test ends.
func start(t *testing.T, lim Limits, h http.Handler, o HTTPOptions) (*Listener, string) {
	t.Helper()
	l, err := Listen("127.0.0.1:0", lim, codectest.QuietLogger())
	if err != nil {
		t.Fatal(err)
	}
	if o.Logger == nil {
		o.Logger = codectest.QuietLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeHTTP(ctx, l, h, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return l, "http://" + l.Addr().String()
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })

// get does one GET on a new connection and returns the status and body.
func get(t *testing.T, url string, user, pass string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAuth(t *testing.T) {
	t.Parallel()
	c, _ := NewCredentials("ann", "pw")
	_, url := start(t, Limits{}, hello, HTTPOptions{Credentials: c})
	for _, tc := range []struct {
		user, pass string
		want       int
	}{{"", "", 401}, {"ann", "bad", 401}, {"bob", "pw", 401}, {"ann", "pw", 200}} {
		if got, body := get(t, url+"/x", tc.user, tc.pass); got != tc.want || got == 200 && body != "hello" {
			t.Errorf("%s/%s: %d %q, want %d", tc.user, tc.pass, got, body, tc.want)
		}
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic realm=") {
		t.Fatalf("WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
	}
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	_, url := start(t, Limits{}, ReadOnly(hello, "GET", "HEAD"), HTTPOptions{})
	for m, want := range map[string]int{"GET": 200, "PUT": 403, "DELETE": 403, "MKCOL": 403, "LOCK": 403, "PROPPATCH": 403, "TRACE": 405, "BREW": 405} {
		req, _ := http.NewRequest(m, url+"/a", strings.NewReader("x"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || want == 403 && !strings.Contains(string(b), "read-only") || want == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %s %q Allow %q", m, resp.Status, b, resp.Header.Get("Allow"))
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIdleFlood: 10,000 idle connections neither lock other clients out
// nor make the server keep 10,000 connections.
func TestIdleFlood(t *testing.T) {
	const flood, limit = 10_000, 64
	l, url := start(t, Limits{MaxConns: limit}, hello, HTTPOptions{})
	base := runtime.NumGoroutine()
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range flood {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatalf("dial after %d connections: %v", len(idle), err)
		}
		idle = append(idle, c)
	}
	waitFor(t, "the flood to be accepted", func() bool { ev, _ := l.Shed(); return ev >= flood-limit })
	for i := range 20 {
		if code, body := get(t, url+"/", "", ""); code != 200 || body != "hello" {
			t.Fatalf("request %d during the flood: %d %q", i, code, body)
		}
	}
	if n := l.Open(); n > limit {
		t.Fatalf("%d connections open, limit %d", n, limit)
	}
	if g := runtime.NumGoroutine(); g > base+2*limit {
		t.Fatalf("%d goroutines after the flood (%d before): connections are kept", g, base)
	}
}

// TestSlowloris: a client that sends its headers a byte at a time is cut
// off after the header timeout, while others are served.
func TestSlowloris(t *testing.T) {
	t.Parallel()
	_, url := start(t, Limits{}, hello, HTTPOptions{ReadHeaderTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	closed := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		io.Copy(io.Discard, c) // returns when the server closes the connection
		closed <- time.Since(start)
	}()
	fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\n")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case d := <-closed:
			if d > 10*time.Second {
				t.Fatalf("cut off after %v", d)
			}
			return
		case <-tick.C:
			c.Write([]byte("X")) // more of a header that never ends
			if code, _ := get(t, url+"/", "", ""); code != 200 {
				t.Fatalf("another client got %d during the slow request", code)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the slow client was never cut off")
		}
	}
}

// TestSlowReader: a client that stops reading a response frees its
// connection after WriteIdle.
func TestSlowReader(t *testing.T) {
	t.Parallel()
	big := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 1<<20)
		for range 256 {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	})
	l, url := start(t, Limits{WriteIdle: 300 * time.Millisecond}, big, HTTPOptions{})
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing more; the server gives up on it.
	waitFor(t, "the stalled connection to be closed", func() bool { return l.Open() == 0 })
}
