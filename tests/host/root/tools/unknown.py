"""Stand-in for tools/unknown.py: what the host runs when a tool is missing or broken."""
from helpers.tool import Response, Tool


class Unknown(Tool):
    async def execute(self, **kwargs):
        return Response(
            message=self.agent.read_prompt("fw.tool_not_found.md", tool_name=self.name, tools_prompt=""),
            break_loop=False,
        )
