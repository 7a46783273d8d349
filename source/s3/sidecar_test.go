package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
)

// TestSidecar: PutSidecar uploads the published index beside its object
// (key+SidecarSuffix, nothing else written), GetSidecar reads it back whole
// with its declared size, and a missing sidecar is ErrNotFound.
func TestSidecar(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, srv := newFake(t)
	c := testClient(t, srv, Options{})
	f.put("b/data.rio", pattern(1000, 1))
	if _, err := c.GetSidecar(ctx, "b", "data.rio"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetSidecar before a publish: %v, want ErrNotFound", err)
	}
	idx := pattern(300, 7)
	if err := c.PutSidecar(ctx, "b", "data.rio", idx); err != nil {
		t.Fatal(err)
	}
	puts := f.requests("PUT")
	if len(puts) != 1 || puts[0].path != "/b/data.rio"+SidecarSuffix {
		t.Fatalf("PUT requests %+v, want one of /b/data.rio%s", puts, SidecarSuffix)
	}
	body, err := c.GetSidecar(ctx, "b", "data.rio")
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	got, err := io.ReadAll(body)
	if err != nil || !bytes.Equal(got, idx) || body.Size != int64(len(idx)) {
		t.Fatalf("GetSidecar: %d bytes (declared %d), %v; want the %d bytes put", len(got), body.Size, err, len(idx))
	}
	if obj, err := io.ReadAll(mustGet(t, c, "b", "data.rio")); err != nil || !bytes.Equal(obj, pattern(1000, 1)) {
		t.Fatalf("the object itself changed: %d bytes, %v", len(obj), err)
	}
}

// mustGet GETs bucket/key, closed at the test's end.
func mustGet(t *testing.T, c *Client, bucket, key string) io.Reader {
	t.Helper()
	b, err := c.Get(context.Background(), bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
