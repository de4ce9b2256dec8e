// Package wsapp is the WebSocket example of loom: an echo endpoint, a chat
// room that sends each message to every connected client, and a page that
// uses both, served by a web.App with web's origin checks on.
//
// Start a hub, build the App, serve it, and close the hub once the App is
// done:
//
//	hub := wsapp.NewHub(0)
//	defer hub.Close()
//	app, err := wsapp.NewApp(hub, nil)
//	if err != nil {
//		return err
//	}
//	return app.ListenAndServe(ctx, "127.0.0.1:8080")
//
// Clients connect to /ws?mode=echo, or to /ws?name=ada for the chat, whose
// messages are JSON Events. Shutting the App down closes every socket with
// StatusGoingAway.
package wsapp
