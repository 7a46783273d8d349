// Package vgw runs a real S3 server for tests and benchmarks: versitygw
// with its posix backend on 127.0.0.1, rooted in a directory of the
// caller's. .ci/run installs the binary into its cached tools folder; tests
// find it through RECFS_VERSITYGW, PATH, or that folder, and skip without
// it unless RECFS_TEST_S3=1 makes it mandatory.
//
// StartServer, (*Server).PutReader and StartRecorder need no testing.T (the
// benchmark program uses them); Start, Put and Recorder wrap them for tests.
package vgw

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3obj "github.com/recfs/recfs/source/s3"
	"github.com/recfs/recfs/test/internal/syncbuf"
)

// Root credentials of every server started here.
const (
	AccessKey = "recfs-test-access"
	SecretKey = "recfs-test-secret-key-0123456789"
	// Version is the versitygw release .ci/run installs.
	Version = "v1.8.0"
	// Bucket is the bucket a server is started with.
	Bucket = "recfs"
)

// ErrNoBinary is returned by StartServer when versitygw cannot be found.
var ErrNoBinary = errors.New("versitygw not found; set RECFS_VERSITYGW or run .ci/run (go install github.com/versity/versitygw/cmd/versitygw@" + Version + ")")

// Server is one running versitygw.
type Server struct {
	Endpoint string // http://127.0.0.1:port (or StartOptions.Host)
	Root     string // the posix backend's directory (buckets are folders)
	Client   *s3obj.Client

	cmd      *exec.Cmd
	log      *syncbuf.Buffer
	stopOnce sync.Once
}

// StartOptions say how to start a server.
type StartOptions struct {
	// Binary is the versitygw executable; "" finds it with Binary.
	Binary string
	// Root is the posix backend's directory (required; created if missing).
	Root string
	// ListenTimeout bounds the wait for the server to listen (default 20 s).
	ListenTimeout time.Duration
	// Wrap, when set, is a command prefix the server runs under, such as
	// `ip netns exec NS` (which execs versitygw itself, so Close still
	// stops the server).
	Wrap []string
	// Host is the address the server listens on (default 127.0.0.1); it
	// must be reachable from this process.
	Host string
}

// Binary finds versitygw, or returns "".
func Binary() string {
	if p := os.Getenv("RECFS_VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	// Where .ci/run installs it: $RECFS_TOOLS or ~/.cache/recfs-tools (the
	// e2e harness moves XDG_CACHE_HOME, so not os.UserCacheDir).
	dir := os.Getenv("RECFS_TOOLS")
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".cache", "recfs-tools")
		}
	}
	if dir != "" {
		p := filepath.Join(dir, "versitygw-"+Version, "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// StartServer runs versitygw on a free port (of 127.0.0.1 unless o.Host
// says otherwise) and creates Bucket.
// The caller must Close the server. Without a binary it returns
// ErrNoBinary.
func StartServer(o StartOptions) (*Server, error) {
	bin := o.Binary
	if bin == "" {
		bin = Binary()
	}
	if bin == "" {
		return nil, ErrNoBinary
	}
	if o.Root == "" {
		return nil, errors.New("vgw: StartOptions.Root is required")
	}
	if o.ListenTimeout <= 0 {
		o.ListenTimeout = 20 * time.Second
	}
	if err := os.MkdirAll(o.Root, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	host := o.Host
	if host == "" {
		host = "127.0.0.1"
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	argv := append(append([]string(nil), o.Wrap...), bin, "--port", addr, "posix", o.Root)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+AccessKey, "ROOT_SECRET_ACCESS_KEY="+SecretKey)
	log := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Endpoint: "http://" + addr, Root: o.Root, cmd: cmd, log: log}
	deadline := time.Now().Add(o.ListenTimeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			s.Close()
			return nil, fmt.Errorf("versitygw did not listen on %s: %v\n%s", addr, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	c, err := s3obj.NewClient(context.Background(), s3obj.Options{Endpoint: s.Endpoint, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, "")})
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Client = c
	if _, err := c.API().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(Bucket)}); err != nil {
		s.Close()
		return nil, fmt.Errorf("create bucket: %v\n%s", err, log.String())
	}
	return s, nil
}

// Close stops the server (its files stay in Root). It may be called more
// than once.
func (s *Server) Close() error {
	s.stopOnce.Do(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	})
	return nil
}

// Log returns what the server printed so far.
func (s *Server) Log() string { return s.log.String() }

// Start runs a server for the test's lifetime and creates Bucket; it skips
// the test without a binary (fails it when RECFS_TEST_S3=1).
func Start(t testing.TB) *Server {
	t.Helper()
	if Binary() == "" {
		if os.Getenv("RECFS_TEST_S3") == "1" {
			t.Fatal("versitygw not found (RECFS_TEST_S3=1; .ci/run installs it)")
		}
		t.Skip("versitygw not found; set RECFS_VERSITYGW or run .ci/run")
	}
	s, err := StartServer(StartOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			t.Logf("versitygw output:\n%s", s.Log())
		}
	})
	return s
}

// Env is the environment a recfs subprocess needs to reach the server.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_ENDPOINT_URL=" + s.Endpoint, "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true"}
}

// PutReader uploads size bytes from r as Bucket/key.
func (s *Server) PutReader(ctx context.Context, key string, r io.Reader, size int64) error {
	_, err := s.Client.API().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(Bucket),
		Key: aws.String(key), Body: r, ContentLength: aws.Int64(size)})
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Put uploads data as Bucket/key.
func (s *Server) Put(t testing.TB, key string, data []byte) {
	t.Helper()
	if err := s.PutReader(context.Background(), key, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
}

// URL is s3://Bucket/key.
func URL(key string) string { return fmt.Sprintf("s3://%s/%s", Bucket, key) }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
