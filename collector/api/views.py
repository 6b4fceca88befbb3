"""Collector API: corpora, their documents (never bodies in lists), passage search."""

from __future__ import annotations

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.roles import IsAnyRole
from collector.api.serializers import (
    CorpusOutputSerializer,
    DocumentListOutputSerializer,
    DocumentSearchOutputSerializer,
    PassageSearchOutputSerializer,
    SearchInputSerializer,
)
from collector.selectors import corpora_visible, corpus_documents, corpus_list
from collector.services import retrieve
from config.api_json import object_or_404


class CorpusListApi(ListAPIView):
    permission_classes = [IsAnyRole]
    serializer_class = CorpusOutputSerializer

    def get_queryset(self):
        return corpora_visible(user=self.request.user, corpora=corpus_list())


class CorpusDocumentListApi(ListAPIView):
    permission_classes = [IsAnyRole]
    serializer_class = DocumentListOutputSerializer

    def get_queryset(self):
        corpus = object_or_404(corpora_visible(user=self.request.user),
                                   name=self.kwargs["name"])
        return corpus_documents(corpus=corpus)


class CorpusSearchApi(APIView):
    """``GET /api/v1/corpora/<name>/search/?q=...&k=10&unit=passage|document``."""

    permission_classes = [IsAnyRole]

    @extend_schema(parameters=[SearchInputSerializer], responses=PolymorphicProxySerializer(
        component_name="SearchOutput",
        serializers={"passage": PassageSearchOutputSerializer,
                     "document": DocumentSearchOutputSerializer},
        resource_type_field_name="unit",
    ))
    def get(self, request: Request, name: str) -> Response:
        corpus = object_or_404(corpora_visible(user=request.user), name=name)
        params = SearchInputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        hits = retrieve(corpus=corpus, text=data["q"], k=data["k"], unit=data["unit"])
        output = (PassageSearchOutputSerializer if data["unit"] == "passage"
                  else DocumentSearchOutputSerializer)
        return Response(output({"corpus": corpus.name, "query": data["q"],
                                "unit": data["unit"], "hits": hits}).data)
