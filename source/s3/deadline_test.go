package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fast are deadlines short enough for tests.
var fast = Options{ConnectTimeout: time.Second, FirstByteTimeout: 750 * time.Millisecond,
	IdleTimeout: 750 * time.Millisecond, RetryBudget: 6 * time.Second, MaxAttempts: 3}

// late is how much longer than its bound a wait may take on a loaded
// machine under the race detector.
const late = 3 * time.Second

// stallFirst makes the first n GETs of objects misbehave as how says
// ("headers": send nothing; "body": send the headers and 100 bytes;
// "drip": a byte every 20 ms; "503": fail), until the client gives up.
func stallFirst(f *fakeS3, n int, how string) *atomic.Int64 {
	var gets atomic.Int64
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hostile = func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.Method != http.MethodGet || r.URL.Query().Has("list-type") {
			return false
		}
		if k := gets.Add(1); n >= 0 && k > int64(n) {
			return false
		}
		switch how {
		case "headers":
			<-r.Context().Done()
		case "503":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "body", "drip":
			w.Header().Set("Content-Range", "bytes "+strings.TrimPrefix(r.Header.Get("Range"), "bytes=")+"/"+"4194304")
			w.WriteHeader(http.StatusPartialContent)
			for i := 0; i < 100 || how == "drip"; i++ {
				if _, err := w.Write([]byte{0}); err != nil {
					return true
				}
				w.(http.Flusher).Flush()
				if how == "drip" {
					select {
					case <-r.Context().Done():
						return true
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
			<-r.Context().Done()
		}
		return true
	}
	return &gets
}

// openStalling opens a 4 MiB object with the fast deadlines, its first n
// GETs misbehaving as stallFirst says; it returns the object, its bytes
// and the GET count. The object is closed when the test ends.
func openStalling(t *testing.T, n int, how string) (*Object, []byte, *atomic.Int64) {
	t.Helper()
	f, srv := newFake(t)
	data := pattern(4*mib, 9)
	f.put("b/k", data)
	o, err := testClient(t, srv, fast).Open(context.Background(), "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o, data, stallFirst(f, n, how)
}

// A GET that stalls, before its headers or in its body, is abandoned at
// its deadline and retried; one that never succeeds fails the read after
// MaxAttempts attempts (or the budget) with an error that is not a
// context's (a mount maps it to EIO, not EINTR).
func TestGetDeadlines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		how      string
		n        int
		wantGets int64
		wantErr  string
	}{
		{"headers", 1, 2, ""},
		{"body", 2, 3, ""},
		{"503", 1, 2, ""},
		{"headers", -1, 3, "no response within 750ms"},
		{"body", -1, 3, "no bytes for 750ms"},
		{"drip", -1, 1, "retry budget"},
		{"503", -1, 3, "503"},
	} {
		t.Run(c.how+"/"+map[bool]string{true: "always", false: "then fine"}[c.n < 0], func(t *testing.T) {
			t.Parallel()
			o, data, gets := openStalling(t, c.n, c.how)
			buf := make([]byte, 1000)
			start := time.Now()
			_, err := o.ReadAt(buf, mib+5)
			took := time.Since(start)
			if took > fast.RetryBudget+late {
				t.Errorf("read took %v; budget %v", took, fast.RetryBudget)
			}
			if g := gets.Load(); g != c.wantGets {
				t.Errorf("%d GETs, want %d", g, c.wantGets)
			}
			if c.wantErr == "" {
				if err != nil || !bytes.Equal(buf, data[mib+5:mib+5+1000]) {
					t.Errorf("read: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("read: %v, want an error with %q", err, c.wantErr)
			}
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("read: %v is a context's error", err)
			}
			// The kernel retries a failed read at once: it fails again
			// without a new GET.
			if _, err2 := o.ReadAt(buf, mib+5); err2 == nil || gets.Load() != c.wantGets {
				t.Errorf("read again: %v after %d GETs", err2, gets.Load())
			}
		})
	}
}

// Every operation of a client, not only an Object's reads, is bounded: a
// HEAD that never answers fails within the retry budget however many
// attempts are allowed, with a *TimeoutError; a GET through Client.Get
// whose body stalls fails the Read.
func TestEveryRequestBounded(t *testing.T) {
	t.Parallel()
	f, srv := newFake(t)
	f.put("b/k", pattern(1000, 1))
	o := fast
	o.MaxAttempts = 100
	c := testClient(t, srv, o)
	f.mu.Lock()
	f.hostile = func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if r.Method == http.MethodHead {
			<-r.Context().Done()
			return true
		}
		return false
	}
	f.mu.Unlock()
	start := time.Now()
	_, err := c.Open(context.Background(), "b", "k")
	var te *TimeoutError
	if !errors.As(err, &te) || te.Op != opBudget || time.Since(start) > o.RetryBudget+late {
		t.Errorf("HEAD that never answers: %v after %v", err, time.Since(start))
	}

	stallFirst(f, -1, "body")
	b, err := c.Get(context.Background(), "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start = time.Now()
	_, err = io.ReadAll(b)
	if !errors.As(err, &te) || te.Op != opIdle || time.Since(start) > o.IdleTimeout+late {
		t.Errorf("a body that stalls: %v after %v", err, time.Since(start))
	}
}

// Listing pages and error documents are bounded in size before they are
// parsed.
func TestMetaResponseBounded(t *testing.T) {
	t.Parallel()
	f, srv := newFake(t)
	f.mu.Lock()
	f.hostile = func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if !r.URL.Query().Has("list-type") {
			return false
		}
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, "<ListBucketResult>")
		for range 20 << 10 {
			if _, err := io.WriteString(w, "<Contents><Key>"+strings.Repeat("k", 1000)+"</Key></Contents>"); err != nil {
				return true
			}
		}
		return true
	}
	f.mu.Unlock()
	o := fast
	o.RetryBudget = time.Minute // the race detector is slow; the size is what cuts it
	_, err := testClient(t, srv, o).FS(context.Background(), "b", "").ReadDir(".")
	if !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("a 20 MB listing page: %v", err)
	}
}

// Only the time a reader waits inside Read counts against a body's
// deadlines: a reader that pauses between Reads for longer than the idle
// timeout (busy with what it read) reads the rest of a healthy body.
func TestSlowReaderNotCut(t *testing.T) {
	t.Parallel()
	f, srv := newFake(t)
	data := pattern(mib, 4)
	f.put("b/k", data)
	b, err := testClient(t, srv, fast).Get(context.Background(), "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var got []byte
	buf := make([]byte, 256<<10)
	for {
		n, err := b.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
		time.Sleep(2 * fast.IdleTimeout) // the reader's own work
	}
	if !bytes.Equal(got, data) {
		t.Errorf("read %d bytes of %d", len(got), len(data))
	}
}

// A stream (Object.Stream, one GET for a pass) is under the same
// deadlines: a body that stalls is abandoned at the idle timeout and asked
// for again from where it stopped; one that always stalls fails the stream
// after its GETs with a *TimeoutError, within their idle timeouts.
func TestStreamDeadlines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		how      string
		n        int
		wantGets int64
	}{
		{"body", 1, 2},
		{"headers", 1, 2},
		{"body", -1, streamAttempts},
	} {
		t.Run(fmt.Sprintf("%s/%d", c.how, c.n), func(t *testing.T) {
			t.Parallel()
			o, data, gets := openStalling(t, c.n, c.how)
			st, err := o.Stream(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			start := time.Now()
			got, err := io.ReadAll(st)
			took := time.Since(start)
			if g := gets.Load(); g != c.wantGets {
				t.Errorf("%d GETs, want %d", g, c.wantGets)
			}
			if c.n < 0 {
				var te *TimeoutError
				if !errors.As(err, &te) || te.Op != opIdle || took > streamAttempts*fast.IdleTimeout+late {
					t.Errorf("a stream whose body always stalls: %v after %v", err, took)
				}
				return
			}
			// The stalling server's 100 bytes before the stall are its own
			// (zeros); what follows must be the object's.
			skip := 0
			if c.how == "body" {
				skip = 100
			}
			if err != nil || len(got) != len(data) || !bytes.Equal(got[skip:], data[skip:]) {
				t.Errorf("stream: %d bytes of %d, %v", len(got), len(data), err)
			}
		})
	}
}
