package s3

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
)

// backoff is the pause before attempt+1 of a request: 100 ms doubled
// each time, at most 5 s, with jitter (between half and all of it).
func backoff(attempt int) time.Duration {
	d := 100 * time.Millisecond << min(max(attempt-1, 0), 6)
	d = min(d, 5*time.Second)
	return d/2 + rand.N(d/2+1)
}

// newRetryer is the SDK retryer of a client: o.MaxAttempts attempts with
// backoff, and no retry quota (the budget bounds a request instead).
func newRetryer(o *Options) aws.Retryer {
	return retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = o.MaxAttempts
		so.MaxBackoff = 5 * time.Second
		so.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			return backoff(attempt), nil
		})
		so.RateLimiter = ratelimit.None
		// No credentials stay missing: asking again only delays the error.
		so.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			if noCredentials(err) {
				return aws.FalseTernary
			}
			return aws.UnknownTernary
		})}, so.Retryables...)
	})
}

// attemptLog is where the transport notes why an attempt failed, so that
// a request cut by its budget can say what went wrong last.
type attemptLog struct {
	mu   sync.Mutex
	last string
}

type attemptLogKey struct{}

// noteAttempt records the failure of an attempt made under ctx.
func noteAttempt(ctx context.Context, why string) {
	if l, ok := ctx.Value(attemptLogKey{}).(*attemptLog); ok {
		l.mu.Lock()
		l.last = why
		l.mu.Unlock()
	}
}

func (l *attemptLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// withBudget runs call under the retry budget of o: when it is not done
// within it, its context is cancelled and a *TimeoutError returned. A
// GetObject that succeeds keeps its context until its body is closed
// (the body's own deadlines bound it from then on).
func withBudget(ctx context.Context, budget time.Duration, call func(context.Context) (any, error)) (any, error) {
	log := &attemptLog{}
	bctx, cancel := context.WithCancelCause(context.WithValue(ctx, attemptLogKey{}, log))
	var mu sync.Mutex
	returned, over := false, false
	t := time.AfterFunc(budget, func() {
		mu.Lock()
		defer mu.Unlock()
		if !returned {
			over = true
			cancel(errBudget)
		}
	})
	out, err := call(bctx)
	mu.Lock()
	returned = true
	mu.Unlock()
	t.Stop()
	g, isGet := out.(*s3.GetObjectOutput)
	if over {
		if isGet && g != nil && g.Body != nil {
			g.Body.Close()
		}
		cancel(nil)
		if ctx.Err() != nil {
			return nil, err // the caller's own end: not a timeout
		}
		return nil, budgetTimeout(budget, log.String())
	}
	if err == nil && isGet && g != nil && g.Body != nil {
		g.Body = &cancelOnClose{ReadCloser: g.Body, cancel: func() { cancel(nil) }}
	} else {
		cancel(nil)
	}
	return out, err
}

var errBudget = errors.New("s3: retry budget spent")

// budgetMiddleware puts every operation of a client under withBudget. An
// upload's budget grows by the budget per MiB of its body.
func budgetMiddleware(o *Options) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("recfsRetryBudget",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				budget := o.RetryBudget
				if p, ok := in.Parameters.(*s3.PutObjectInput); ok && p.ContentLength != nil {
					budget += time.Duration(*p.ContentLength/paceUnit) * o.RetryBudget
				}
				var md middleware.Metadata
				res, err := withBudget(ctx, budget, func(ctx context.Context) (any, error) {
					out, m, err := next.HandleInitialize(ctx, in)
					md = m
					return out.Result, err
				})
				return middleware.InitializeOutput{Result: res}, md, err
			}), middleware.Before)
	}
}

// cancelOnClose releases a context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
