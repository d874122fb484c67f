"""Text handling shared by the indexer and the search legs (keyword tokens, CJK expansion):
what the indexer writes for the keyword leg must be tokenised exactly as the leg reads it; and
the control characters kept out of what an agent reads (`controls`)."""
