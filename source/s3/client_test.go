package s3

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
)

// hostRecorder is an HTTP transport that records where requests go and
// answers none of them.
type hostRecorder struct {
	mu    sync.Mutex
	hosts []string
	paths []string
}

var errNoNetwork = errors.New("test transport: no network")

func (h *hostRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.hosts = append(h.hosts, r.URL.Host)
	h.paths = append(h.paths, r.URL.Path)
	h.mu.Unlock()
	return nil, errNoNetwork
}

// Path-style addressing is chosen for IP and localhost endpoints and on
// request; a named endpoint gets the bucket as a subdomain. AWS_ENDPOINT_URL
// is honoured when no endpoint is given, and the flag wins over it.
func TestAddressing(t *testing.T) {
	for _, c := range []struct {
		env, endpoint string
		pathStyle     bool
		host, path    string
	}{
		{"", "http://127.0.0.1:9000", false, "127.0.0.1:9000", "/bkt/k"},
		{"", "http://localhost:9000", false, "localhost:9000", "/bkt/k"},
		{"", "http://store.example:9000", false, "bkt.store.example:9000", "/k"},
		{"", "http://store.example:9000", true, "store.example:9000", "/bkt/k"},
		{"http://10.1.2.3:7070", "", false, "10.1.2.3:7070", "/bkt/k"},
		{"http://10.1.2.3:7070", "http://store.example", false, "bkt.store.example", "/k"},
	} {
		t.Setenv("AWS_ENDPOINT_URL", c.env)
		t.Setenv("AWS_ENDPOINT_URL_S3", "")
		rec := &hostRecorder{}
		cl, err := NewClient(context.Background(), Options{Endpoint: c.endpoint, PathStyle: c.pathStyle, Region: "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""),
			HTTPClient:  &http.Client{Transport: rec}})
		if err != nil {
			t.Fatal(err)
		}
		// The first attempt shows the address; cut the retries short.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, _ = cl.Open(ctx, "bkt", "k")
		cancel()
		rec.mu.Lock()
		if len(rec.hosts) == 0 || rec.hosts[0] != c.host || rec.paths[0] != c.path {
			t.Errorf("env %q endpoint %q path-style %v: requests went to %v %v, want %s%s",
				c.env, c.endpoint, c.pathStyle, rec.hosts, rec.paths, c.host, c.path)
		}
		rec.mu.Unlock()
		if want := "s3://" + c.endpoint; c.endpoint != "" && "s3://http://"+cl.Endpoint() != want && "s3://https://"+cl.Endpoint() != want {
			t.Errorf("identity endpoint %q for %q", cl.Endpoint(), c.endpoint)
		}
	}
}
