"""`pooling serve`: the judging web app (Starlette, server-rendered Jinja2 pages, a little JS).

Assessors judge their assigned documents in a browser; organisers watch progress and
agreement and run the campaign. Every store access goes through one connection and one lock
(`pooling.web.gate`); the app itself is built by `pooling.web.app.create_app`.
"""
