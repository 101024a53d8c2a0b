"""The search engine: a block of instances searched, refined and described.

Everything here serves ``explain``'s search and nothing else imports it but
the run driver and what ``fit`` resolves.
"""
