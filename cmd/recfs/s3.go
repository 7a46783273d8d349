package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/recfs/recfs/codec/decoders"
	rfs "github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/s3"
)

// Flags of the S3 sources: every command that takes a record file takes an
// s3://bucket/key URL too, reaching the store the way AWS tools do (the
// environment, ~/.aws/config and credentials, instance roles), with these
// for S3-compatible stores.
const (
	flagS3Endpoint  = "s3-endpoint"
	flagS3PathStyle = "s3-path-style"
	flagS3Region    = "s3-region"
	flagS3Cache     = "s3-cache"
	// Deadlines and bounds (s3.Options says what each bounds).
	flagS3ConnectTimeout   = "s3-connect-timeout"
	flagS3FirstByteTimeout = "s3-first-byte-timeout"
	flagS3IdleTimeout      = "s3-idle-timeout"
	flagS3RetryBudget      = "s3-retry-budget"
	flagS3Attempts         = "s3-attempts"
	flagS3ListMaxPages     = "s3-list-max-pages"
	flagS3ListMaxBytes     = "s3-list-max-bytes"
)

// registerS3Flags adds the S3 flags to a command's flag set.
func registerS3Flags(fs *pflag.FlagSet) {
	fs.String(flagS3Endpoint, "", "S3-compatible store for s3:// sources, http(s)://host[:port] (default $AWS_ENDPOINT_URL, else AWS)")
	fs.Bool(flagS3PathStyle, false, "path-style S3 addressing (automatic for an IP address or localhost endpoint)")
	fs.String(flagS3Region, "", "S3 region (default from the AWS configuration, else us-east-1)")
	fs.String(flagS3Cache, "64M", "memory cache of an s3:// object's bytes (1 MiB blocks)")
	fs.Duration(flagS3ConnectTimeout, s3.DefaultConnectTimeout, "S3: longest wait for a connection")
	fs.Duration(flagS3FirstByteTimeout, s3.DefaultFirstByteTimeout, "S3: longest wait for a response once the request is sent")
	fs.Duration(flagS3IdleTimeout, s3.DefaultIdleTimeout, "S3: longest pause between the bytes of a request or response")
	fs.Duration(flagS3RetryBudget, s3.DefaultRetryBudget, "S3: longest time for one request, all its attempts included, and for each MiB of a response; a read waits no longer (then EIO)")
	fs.Int(flagS3Attempts, s3.DefaultMaxAttempts, "S3: attempts of a request before it fails (pauses of 100ms, 200ms, ... between them)")
	fs.Int(flagS3ListMaxPages, s3.DefaultListMaxPages, "S3: pages (of up to 1,000 keys) a directory listing may take; past it the listing ends with a log line")
	fs.String(flagS3ListMaxBytes, "64M", "S3: names (counted with 128 bytes each beside their length) a directory listing may hold; past it the listing ends with a log line")
}

// s3Client builds the client of a command's S3 flags.
func s3Client(cmd *cobra.Command) (*s3.Client, error) {
	o, err := s3ClientOptions(cmd)
	if err != nil {
		return nil, err
	}
	return s3.NewClient(cmd.Context(), o)
}

// s3ClientOptions returns the client options of a command's S3 flags.
func s3ClientOptions(cmd *cobra.Command) (s3.Options, error) {
	fl := cmd.Flags()
	var o s3.Options
	o.Endpoint, _ = fl.GetString(flagS3Endpoint)
	o.PathStyle, _ = fl.GetBool(flagS3PathStyle)
	o.Region, _ = fl.GetString(flagS3Region)
	cache, _ := fl.GetString(flagS3Cache)
	n, err := parseSize(cache)
	if err != nil || n < s3.DefaultBlockSize {
		return o, usagef("--%s %q: want a size of at least 1M", flagS3Cache, cache)
	}
	o.CacheBytes = n
	for _, d := range []struct {
		flag string
		to   *time.Duration
	}{{flagS3ConnectTimeout, &o.ConnectTimeout}, {flagS3FirstByteTimeout, &o.FirstByteTimeout},
		{flagS3IdleTimeout, &o.IdleTimeout}, {flagS3RetryBudget, &o.RetryBudget}} {
		if *d.to, _ = fl.GetDuration(d.flag); *d.to <= 0 {
			return o, usagef("--%s %v: want a duration above 0", d.flag, *d.to)
		}
	}
	if o.MaxAttempts, _ = fl.GetInt(flagS3Attempts); o.MaxAttempts < 1 {
		return o, usagef("--%s %d: want at least 1", flagS3Attempts, o.MaxAttempts)
	}
	if o.ListMaxPages, _ = fl.GetInt(flagS3ListMaxPages); o.ListMaxPages < 1 {
		return o, usagef("--%s %d: want at least 1", flagS3ListMaxPages, o.ListMaxPages)
	}
	lb, _ := fl.GetString(flagS3ListMaxBytes)
	if o.ListMaxBytes, err = parseSize(lb); err != nil || o.ListMaxBytes <= 0 {
		return o, usagef("--%s %q: want a size above 0", flagS3ListMaxBytes, lb)
	}
	if logrus.IsLevelEnabled(logrus.DebugLevel) {
		o.SDKLog = cmd.ErrOrStderr() // -v: the SDK's own lines too
	}
	return o, nil
}

// openS3Object opens the object an s3:// URL names (one HEAD).
func openS3Object(cmd *cobra.Command, url string) (*s3.Object, error) {
	_, obj, err := openS3(cmd, url)
	return obj, err
}

// openS3 returns the client of the command's flags and the object url
// names.
func openS3(cmd *cobra.Command, url string) (*s3.Client, *s3.Object, error) {
	bucket, key, err := s3.ParseURL(url)
	if err != nil {
		return nil, nil, usageError{err}
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return nil, nil, usagef("%s is a prefix; these commands read one object (s3://bucket/key)", url)
	}
	c, err := s3Client(cmd)
	if err != nil {
		return nil, nil, err
	}
	obj, err := c.Open(cmd.Context(), bucket, key)
	if errors.Is(err, s3.ErrNotFound) {
		if berr := c.CheckBucket(cmd.Context(), bucket, key); berr != nil {
			err = berr // the bucket is what is missing
		}
	}
	return c, obj, err
}

// s3Options applies what index.Open infers from a local name.
func s3Options(url string, o index.Options) index.Options {
	if o.LegacyTransform == "" && strings.HasSuffix(url, ".grail-rpk-gz") {
		o.LegacyTransform = "flate"
	}
	return o
}

// openS3Table is openTable for an s3:// URL: the object's table, loaded
// from the cache when one was saved for its ETag and size, else built by
// ranged GETs (and saved). An index published next to the object is
// fetched first when there is no saved one. The object stays open for the
// table's reads.
func openS3Table(cmd *cobra.Command, url string, o index.Options) (*index.Table, *s3.Object, error) {
	c, obj, err := openS3(cmd, url)
	if err != nil {
		return nil, nil, err
	}
	bucket, key, _ := s3.ParseURL(url)
	importSidecar(cmd.Context(), c, bucket, key, obj, o)
	bar := newProgressBar(cmd.ErrOrStderr(), "indexing "+url)
	if bar != nil {
		o.Progress = bar.Update
	} else if daemonChild() {
		o.Progress = daemonStatus().progress
	}
	t, err := index.BuildSource(cmd.Context(), obj, s3Options(url, o))
	if bar != nil {
		bar.Done()
	}
	if err != nil {
		obj.Close()
		return nil, nil, err
	}
	inf := t.Info()
	st := obj.Stats()
	logrus.WithFields(logrus.Fields{
		"object": obj.URL(), "format": inf.Format.String(), "records": inf.Records,
		"source": inf.Source, "time": inf.BuildTime, "gets": st.Gets, "fetched": st.BytesFetched,
	}).Debug("index ready")
	return t, obj, nil
}

// openS3Sequential is openSequential for an s3:// URL: a fresh scan whose
// reads the object's cache turns into large sequential GETs.
func openS3Sequential(cmd *cobra.Command, url string, o index.Options) (seqTable, error) {
	obj, err := openS3Object(cmd, url)
	if err != nil {
		return seqTable{}, err
	}
	bar := newProgressBar(cmd.ErrOrStderr(), "indexing "+url)
	if bar != nil {
		o.Progress = bar.Update
	}
	t, err := index.Build(cmd.Context(), obj, obj.Size(), s3Options(url, o))
	if bar != nil {
		bar.Done()
	}
	if err != nil {
		obj.Close()
		return seqTable{}, fmt.Errorf("%s: %w", url, err)
	}
	return seqTable{Table: t, obj: obj}, nil
}

// objectInfo is the os.FileInfo checkPaths gives for an s3:// source: a
// regular file as far as the mount's checks go.
type objectInfo struct{ name string }

func (i objectInfo) Name() string       { return i.name }
func (i objectInfo) Size() int64        { return 0 }
func (i objectInfo) Mode() fs.FileMode  { return 0o444 }
func (i objectInfo) ModTime() time.Time { return time.Time{} }
func (i objectInfo) IsDir() bool        { return false }
func (i objectInfo) Sys() any           { return nil }

// s3MountFlags refuses what an s3 mount cannot do yet.
func s3MountFlags(f *mountFlags) error {
	switch {
	case f.rw:
		return usagef("--rw: s3:// sources are read-only")
	}
	return nil
}

// s3Tree is the read-only tree of one object for a mount (its records
// decoded as --decode says).
// With follow, the object is HEADed at the follow interval and a new
// version replaces the table's records (see index.Table.Follow).
func s3Tree(cmd *cobra.Command, url string, o index.Options, plan *decoders.Plan, follow bool, fo rfs.Options) (*rfs.Tree, error) {
	t, obj, err := openS3Table(cmd, url, o)
	if err != nil {
		return nil, err
	}
	// The table owns the object (closes it), and follows it when the mount
	// does (index.Table.Follow HEADs it; a new version replaces the records
	// as one new generation).
	var src rfs.Source = t
	if follow {
		logrus.WithField("object", obj.URL()).Info("s3 object mounted read-only and followed: a new version replaces the records (reads of records opened before fail with EIO)")
	} else {
		logrus.WithField("object", obj.URL()).Info("s3 object mounted read-only: creating or changing files fails with EROFS; an overwritten object fails reads with EIO until remounted")
	}
	v, err := viewSource(plan, src, url)
	if err != nil {
		src.Close()
		return nil, err
	}
	tree, err := rfs.NewObject(url, obj.Size(), obj.ModTime(), v, fo)
	if err != nil {
		src.Close()
		return nil, err
	}
	return tree, nil
}
