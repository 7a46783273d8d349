package recfsio

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/recfs/recfs/index"
	s3obj "github.com/recfs/recfs/source/s3"
)

// The versitygw the test/ module's S3 tests use (.ci/run installs it);
// its helpers are internal to that module, so this is a small copy of
// what these tests need.
const (
	vgwVersion = "v1.8.0"
	vgwAccess  = "recfs-test-access"
	vgwSecret  = "recfs-test-secret-key-0123456789"
	vgwBucket  = "recfs"
)

// vgwBinary finds versitygw as test/internal/vgw does, or returns "".
func vgwBinary() string {
	if p := os.Getenv("RECFS_VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	dir := os.Getenv("RECFS_TOOLS")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "recfs-tools")
	}
	p := filepath.Join(dir, "versitygw-"+vgwVersion, "versitygw")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// s3server is a versitygw with a bucket, behind a proxy that counts
// requests by method and path.
type s3server struct {
	endpoint string // the proxy's
	client   *s3obj.Client
	mu       sync.Mutex
	reqs     map[string]int // "GET /recfs/key" -> count
}

// startS3 starts versitygw for the test (skipping without it, failing
// when RECFS_TEST_S3=1) and points the AWS environment at the proxy.
func startS3(t *testing.T) *s3server {
	t.Helper()
	bin := vgwBinary()
	if bin == "" {
		if os.Getenv("RECFS_TEST_S3") == "1" {
			t.Fatal("versitygw not found (RECFS_TEST_S3=1; .ci/run installs it)")
		}
		t.Skip("versitygw not found; set RECFS_VERSITYGW or run .ci/run")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--port", addr, "posix", t.TempDir())
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+vgwAccess, "ROOT_SECRET_ACCESS_KEY="+vgwSecret)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := &s3server{reqs: map[string]int{}}
	target, _ := url.Parse("http://" + addr)
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs[r.Method+" "+r.URL.Path]++
		s.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	s.endpoint = proxy.URL
	s.client, err = s3obj.NewClient(context.Background(), s3obj.Options{Endpoint: s.endpoint, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(vgwAccess, vgwSecret, "")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.API().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(vgwBucket)}); err != nil {
		t.Fatalf("create bucket: %v\n%s", err, log.String())
	}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": vgwAccess, "AWS_SECRET_ACCESS_KEY": vgwSecret,
		"AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"} {
		t.Setenv(k, v)
	}
	return s
}

// put uploads b as key.
func (s *s3server) put(t *testing.T, key string, b []byte) {
	t.Helper()
	_, err := s.client.API().PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(vgwBucket),
		Key: aws.String(key), Body: bytes.NewReader(b), ContentLength: aws.Int64(int64(len(b)))})
	if err != nil {
		t.Fatal(err)
	}
}

// publish indexes key as `recfs index --publish` does: the table saved
// for the object, uploaded as key.recfs-idx.
func (s *s3server) publish(t *testing.T, key string) {
	t.Helper()
	ctx := context.Background()
	obj, err := s.client.Open(ctx, vgwBucket, key)
	if err != nil {
		t.Fatal(err)
	}
	o := index.Options{CacheDir: t.TempDir()}
	tb, err := index.OpenSource(ctx, obj, o)
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
	b, err := os.ReadFile(index.SourceCacheFile(o, obj.Identity()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.client.PutSidecar(context.Background(), vgwBucket, key, b); err != nil {
		t.Fatal(err)
	}
}

// take returns the requests counted so far and starts over.
func (s *s3server) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reqs
	s.reqs = map[string]int{}
	return r
}

// TestReadS3PublishedIndex reads TFRecord objects matched by an s3://
// glob, each with a published index: workers fetch each sidecar once and
// load it (no scan), and read every record exactly once. Without the
// sidecars, the same read scans: the counter tells the two apart.
func TestReadS3PublishedIndex(t *testing.T) {
	s := startS3(t)
	dir := t.TempDir()
	var paths, urls []string
	for i := range 3 {
		b := tfrecordBytes(t, payloads(fmt.Sprintf("s3-%d", i), 200, 400))
		name := fmt.Sprintf("part-%d.tfrecord", i)
		paths = append(paths, writeFile(t, dir, name, b))
		s.put(t, "data/"+name, b)
		urls = append(urls, fmt.Sprintf("s3://%s/data/%s", vgwBucket, name))
	}
	s.put(t, "data/other.txt", []byte("not matched"))
	local, _ := want(t, paths...)
	keys := make([]string, len(local))
	for i, k := range local {
		keys[i] = strings.Replace(k, dir+"/", "s3://"+vgwBucket+"/data/", 1)
	}
	opt := Options{SplitBytes: 8 << 10, S3: S3Options{Endpoint: s.endpoint}}
	read := func(t *testing.T) Summary {
		opt.CacheDir = t.TempDir() // a fresh worker: no saved tables
		p, sc := beam.NewPipelineWithRoot()
		got := beam.ParDo(sc, recordKey, ReadWithMeta(sc, "s3://"+vgwBucket+"/data/*.tfrecord", opt))
		passert.Equals(sc, got, stringsAny(keys)...)
		return run(t, p)
	}

	// No sidecars: every file is scanned.
	s.take()
	sum := read(t)
	if sum.IndexBuilt != 3 || sum.IndexLoaded != 0 {
		t.Errorf("without sidecars: %d built, %d loaded; want 3, 0", sum.IndexBuilt, sum.IndexLoaded)
	}

	for _, u := range urls {
		s.publish(t, strings.TrimPrefix(u, "s3://"+vgwBucket+"/"))
	}
	s.take()
	sum = read(t)
	if sum.IndexBuilt != 0 || sum.IndexLoaded != 3 {
		t.Errorf("with sidecars: %d built, %d loaded; want 0, 3", sum.IndexBuilt, sum.IndexLoaded)
	}
	if sum.Restrictions <= 3 {
		t.Errorf("%d restrictions for 3 objects in 8 KiB splits", sum.Restrictions)
	}
	reqs := s.take()
	for _, u := range urls {
		side := "GET " + strings.TrimPrefix(u, "s3:/") + s3obj.SidecarSuffix
		if reqs[side] != 1 {
			t.Errorf("%s: %d requests, want 1 (requests: %v)", side, reqs[side], reqs)
		}
	}
	t.Logf("requests with sidecars: %v", reqs)
}
