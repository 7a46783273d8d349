package s3

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/sirupsen/logrus"
)

// Errors that say what the user can do about a failed request.
var (
	// ErrAccessDenied: the store refused the credentials (a wrong secret,
	// a key without the permission).
	ErrAccessDenied = errors.New("s3: access denied")
	// ErrNoBucket: the bucket does not exist.
	ErrNoBucket = errors.New("s3: no such bucket")
	// ErrNoCredentials: the AWS configuration chain found no credentials.
	ErrNoCredentials = errors.New("s3: no AWS credentials found")
)

// plainError is an error in the user's words; it matches its kind (one of
// the errors above) and the SDK error it explains.
type plainError struct {
	msg       string
	kind, err error
}

func (e *plainError) Error() string   { return e.msg }
func (e *plainError) Unwrap() []error { return []error{e.kind, e.err} }

// explain returns err, an SDK error of a request on bucket/key, in the
// user's words when it is one of the above; else nil.
func explain(err error, bucket, key string) error {
	url := "s3://" + bucket + "/" + key
	logrus.WithError(err).WithField("object", url).Debug("S3 request failed")
	switch {
	case noCredentials(err):
		return &plainError{fmt.Sprintf("no AWS credentials found for %s (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)", url), ErrNoCredentials, err}
	case httpStatus(err) == 403 || hasCode(err, "AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
		return &plainError{fmt.Sprintf("access denied to %s (check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE)", url), ErrAccessDenied, err}
	case hasCode(err, "NoSuchBucket"):
		return noBucket(bucket, url, err)
	}
	return nil
}

// noBucket is the error of a request on url in a bucket that does not
// exist.
func noBucket(bucket, url string, err error) error {
	return &plainError{fmt.Sprintf("bucket %s does not exist (%s)", bucket, url), ErrNoBucket, err}
}

// CheckBucket tells whether bucket exists, for a caller that got
// ErrNotFound for key in it (a HEAD of an object cannot say which is
// missing): an error matching ErrNoBucket when the bucket is, else nil.
func (c *Client) CheckBucket(ctx context.Context, bucket, key string) error {
	_, err := c.api.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	if err != nil && (httpStatus(err) == 404 || hasCode(err, "NoSuchBucket", "NotFound")) {
		return noBucket(bucket, "s3://"+bucket+"/"+key, err)
	}
	return nil
}

// hasCode reports whether err carries one of the S3 error codes.
func hasCode(err error, codes ...string) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	for _, c := range codes {
		if ae.ErrorCode() == c {
			return true
		}
	}
	return false
}

// noCredentials reports whether err is the SDK's failure to find any
// credentials (it says so only in its text).
func noCredentials(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "get credentials:") || strings.Contains(msg, "failed to refresh cached credentials") ||
		strings.Contains(msg, "no EC2 IMDS role found")
}
