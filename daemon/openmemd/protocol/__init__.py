"""The request protocol both ends use: typed requests, replies, limits and endpoints."""
