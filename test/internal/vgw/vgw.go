// Package vgw runs a real S3 server for tests: versitygw with its posix
// backend on 127.0.0.1, rooted in a test's temporary directory. .ci/run
// installs the binary into its cached tools folder; tests find it through
// RECFS_VERSITYGW, PATH, or that folder, and skip without it unless
// RECFS_TEST_S3=1 makes it mandatory.
package vgw

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/recfs/recfs/index/source/s3obj"
)

// Root credentials of every server started here.
const (
	AccessKey = "recfs-test-access"
	SecretKey = "recfs-test-secret-key-0123456789"
	// Version is the versitygw release .ci/run installs.
	Version = "v1.8.0"
	// Bucket is the bucket Start creates.
	Bucket = "recfs"
)

// Server is one running versitygw.
type Server struct {
	Endpoint string // http://127.0.0.1:port
	Root     string // the posix backend's directory (buckets are folders)
	Client   *s3obj.Client
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

// Start runs a server for the test's lifetime and creates Bucket.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		if os.Getenv("RECFS_TEST_S3") == "1" {
			t.Fatal("versitygw not found (RECFS_TEST_S3=1; .ci/run installs it)")
		}
		t.Skip("versitygw not found; set RECFS_VERSITYGW or run .ci/run")
	}
	root := t.TempDir()
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "--port", addr, "posix", root)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+AccessKey, "ROOT_SECRET_ACCESS_KEY="+SecretKey)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("versitygw output:\n%s", log.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s: %v\n%s", addr, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := &Server{Endpoint: "http://" + addr, Root: root}
	c, err := s3obj.NewClient(context.Background(), s3obj.Options{Endpoint: s.Endpoint, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	s.Client = c
	if _, err := c.API().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(Bucket)}); err != nil {
		t.Fatalf("create bucket: %v\n%s", err, log.String())
	}
	return s
}

// Env is the environment a recfs subprocess needs to reach the server.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_ENDPOINT_URL=" + s.Endpoint, "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true"}
}

// Put uploads data as Bucket/key.
func (s *Server) Put(t testing.TB, key string, data []byte) {
	t.Helper()
	_, err := s.Client.API().PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(Bucket),
		Key: aws.String(key), Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// URL is s3://Bucket/key.
func URL(key string) string { return fmt.Sprintf("s3://%s/%s", Bucket, key) }

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
