package task

import (
	"context"
	"errors"
	"reflect"
)

// ErrNoFutures is the error of Any given no futures.
var ErrNoFutures = errors.New("task: no futures")

// All waits for every future and returns their values in argument order.
// The first future to fail, in the order they complete, cancels the others;
// All waits for them to return and gives that first error. If ctx ends first,
// All cancels every future and returns ctx's error at once, without waiting.
// No futures give an empty slice and nil.
func All[T any](ctx context.Context, futures ...*Future[T]) ([]T, error) {
	values := make([]T, len(futures))
	var first error
	err := completions(ctx, futures, func(i int) bool {
		if futures[i].err != nil && first == nil {
			first = futures[i].err
			cancelAll(futures)
		}
		values[i] = futures[i].value
		return false
	})
	if err != nil {
		cancelAll(futures)
		return nil, err
	}
	if first != nil {
		return nil, first
	}
	return values, nil
}

// Any returns the value of the first future to succeed and cancels the
// others, without waiting for them. If every future fails it returns their
// errors joined in argument order (errors.Join); if ctx ends first it
// cancels every future and returns ctx's error. No futures give ErrNoFutures.
func Any[T any](ctx context.Context, futures ...*Future[T]) (T, error) {
	if len(futures) == 0 {
		return *new(T), ErrNoFutures
	}
	winner := -1
	err := completions(ctx, futures, func(i int) bool {
		if futures[i].err == nil {
			winner = i
			return true
		}
		return false
	})
	cancelAll(futures)
	if err != nil {
		return *new(T), err
	}
	if winner >= 0 {
		return futures[winner].value, nil
	}
	errs := make([]error, len(futures))
	for i, f := range futures {
		errs[i] = f.err
	}
	return *new(T), errors.Join(errs...)
}

// completions calls done with each future's index as it completes, until
// done returns true or every future has completed; it returns ctx's error if
// ctx ends first. It starts no goroutine.
func completions[T any](ctx context.Context, futures []*Future[T], done func(int) bool) error {
	cases := make([]reflect.SelectCase, 0, len(futures)+1)
	index := make([]int, 0, len(futures)+1)
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
	index = append(index, -1)
	for i, f := range futures {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(f.done)})
		index = append(index, i)
	}
	for len(cases) > 1 {
		chosen, _, _ := reflect.Select(cases)
		if chosen == 0 {
			return ctx.Err()
		}
		if done(index[chosen]) {
			return nil
		}
		cases = append(cases[:chosen], cases[chosen+1:]...)
		index = append(index[:chosen], index[chosen+1:]...)
	}
	return nil
}

func cancelAll[T any](futures []*Future[T]) {
	for _, f := range futures {
		f.Cancel()
	}
}
