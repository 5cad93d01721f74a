"""Messages and stubs generated from proto/berth/v1 at build time."""
