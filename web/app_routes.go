package web

import (
	"io/fs"
	"net/http"
)

// The App's route methods register on its root group: no prefix, the App's
// settings (decorators given to New wrap the whole App instead).

// Group returns a group for routes under prefix; see Group.Group.
func (a *App) Group(prefix string, opts ...RouteOption) *Group { return a.root.Group(prefix, opts...) }

// Handle registers h for method at path; see Group.Handle.
func (a *App) Handle(method, path string, h http.Handler, opts ...RouteOption) {
	a.root.Handle(method, path, h, opts...)
}

// Get registers h for GET and HEAD at path; see Group.Handle.
func (a *App) Get(path string, h HandlerFunc, opts ...RouteOption) { a.root.Get(path, h, opts...) }

// Post registers h for POST at path; see Group.Handle.
func (a *App) Post(path string, h HandlerFunc, opts ...RouteOption) { a.root.Post(path, h, opts...) }

// Put registers h for PUT at path; see Group.Handle.
func (a *App) Put(path string, h HandlerFunc, opts ...RouteOption) { a.root.Put(path, h, opts...) }

// Patch registers h for PATCH at path; see Group.Handle.
func (a *App) Patch(path string, h HandlerFunc, opts ...RouteOption) { a.root.Patch(path, h, opts...) }

// Delete registers h for DELETE at path; see Group.Handle.
func (a *App) Delete(path string, h HandlerFunc, opts ...RouteOption) {
	a.root.Delete(path, h, opts...)
}

// Options registers h for OPTIONS at path; see Group.Handle.
func (a *App) Options(path string, h HandlerFunc, opts ...RouteOption) {
	a.root.Options(path, h, opts...)
}

// Static serves fsys below prefix; see Group.Static.
func (a *App) Static(prefix string, fsys fs.FS, opts ...RouteOption) {
	a.root.Static(prefix, fsys, opts...)
}
