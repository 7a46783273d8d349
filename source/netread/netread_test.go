package netread

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// late is how much longer than its limit a failure may take on a loaded
// machine under the race detector.
const late = 5 * time.Second

// stallingServer answers every request as serve says; serve returns when
// the request's context ends (the client gave the attempt up) or the test
// ends.
func stallingServer(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, done <-chan struct{})) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, done)
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

// wait blocks until the request is given up or the test ends.
func wait(r *http.Request, done <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-done:
	}
}

// headersThen sends a 200 with the first n bytes of its body, flushed.
func headersThen(w http.ResponseWriter, n int) bool {
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(make([]byte, n)); err != nil {
		return false
	}
	w.(http.Flusher).Flush()
	return true
}

// TestLimits: each limit fires on the server behaviour it bounds, with a
// *TimeoutError naming it, whether the attempt fails in RoundTrip or in
// a body's Read.
func TestLimits(t *testing.T) {
	t.Parallel()
	const short = 200 * time.Millisecond
	for _, c := range []struct {
		name   string
		limits Limits
		dial   bool // the connection never opens
		serve  func(w http.ResponseWriter, r *http.Request, done <-chan struct{})
		want   string
	}{
		{name: "connect", limits: Limits{Connect: short}, dial: true, want: OpConnect},
		{name: "first byte", limits: Limits{Connect: time.Minute, FirstByte: short, Idle: time.Minute},
			serve: func(w http.ResponseWriter, r *http.Request, done <-chan struct{}) { wait(r, done) },
			want:  OpFirstByte},
		{name: "idle", limits: Limits{Idle: short, Pace: time.Minute},
			serve: func(w http.ResponseWriter, r *http.Request, done <-chan struct{}) {
				if headersThen(w, 100) {
					wait(r, done)
				}
			},
			want: OpIdle},
		{name: "pace", limits: Limits{Idle: time.Minute, Pace: 4 * short},
			serve: func(w http.ResponseWriter, r *http.Request, done <-chan struct{}) {
				if !headersThen(w, 1) {
					return
				}
				for {
					select {
					case <-r.Context().Done():
						return
					case <-done:
						return
					case <-time.After(10 * time.Millisecond):
					}
					if _, err := w.Write([]byte{0}); err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			},
			want: OpPace},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := &http.Transport{}
			url := "http://127.0.0.1:1/"
			if c.dial {
				base.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
					<-ctx.Done()
					return nil, ctx.Err()
				}
			} else {
				url = stallingServer(t, c.serve).URL
			}
			t.Cleanup(base.CloseIdleConnections)
			client := &http.Client{Transport: &Transport{Base: base, Limits: c.limits, Name: "net"}}
			start := time.Now()
			err := get(t, client, url)
			var te *TimeoutError
			if !errors.As(err, &te) || te.Op != c.want {
				t.Fatalf("got %v, want a TimeoutError for %q", err, c.want)
			}
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%v is a context's error", err)
			}
			if !te.Timeout() || !strings.HasPrefix(te.Error(), "net: ") || !strings.Contains(te.Error(), te.After.String()) {
				t.Errorf("%q: Timeout %v, should name its transport and limit", te.Error(), te.Timeout())
			}
			if d := time.Since(start); d > 4*short+late {
				t.Errorf("failed after %v", d)
			}
		})
	}
}

// get GETs url and reads the body to its end, or gives up after 30 s
// (a limit that did not fire).
func get(t *testing.T, c *http.Client, url string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// TestHealthyBody: under every limit, a request body is sent and a
// response body of several PaceUnits that flows is read whole.
func TestHealthyBody(t *testing.T) {
	t.Parallel()
	srv := stallingServer(t, func(w http.ResponseWriter, r *http.Request, done <-chan struct{}) {
		n, _ := io.Copy(io.Discard, r.Body)
		w.Write(make([]byte, 3*PaceUnit+n))
	})
	client := &http.Client{Transport: &Transport{Limits: Limits{Connect: time.Minute, FirstByte: time.Minute, Idle: time.Minute, Pace: time.Minute}}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL, strings.NewReader(strings.Repeat("x", 1000)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != 3*PaceUnit+1000 {
		t.Errorf("read %d bytes, %v; want %d", n, err, 3*PaceUnit+1000)
	}
}
